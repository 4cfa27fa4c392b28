-- What was inserted after sequence number ARGV[1], for a worker's bucket cache
-- (worker/index/redis/bucket_cache.py).
--
-- KEYS[1]   sequence counter
-- KEYS[2]   recent inserts: the ring of entries by sequence number (lib.lua)
-- ARGV[1]   the last sequence number the copy holds
--
-- Reply: {counter, entries}: the entries of sequence numbers ARGV[1] + 1 .. counter (format.py
-- ENTRY), in order (a removed article's slot is zeros); or {counter} when the ring no longer
-- holds them all, or the counter is below ARGV[1] (the index was emptied): reload.

local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local since = tonumber(ARGV[1])
if last < since or last - since > RECENT_SLOTS then return {last} end
return {last, recent_since(KEYS[2], since, last)}
