#!/bin/sh
# As in Kafka's distribution (the compose file's health check runs it).
exec java -Xmx128m -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties \
  -cp '/opt/kafka/libs/*' org.apache.kafka.tools.BrokerApiVersionsCommand "$@"
