"""The stream worker: the faust app and the only code that talks to Kafka (faust, aiokafka),
serves HTTP (aiohttp) or keeps metrics (prometheus_client)."""
