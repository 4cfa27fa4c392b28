-- What was inserted after sequence number ARGV[1], for a worker's bucket cache
-- (worker/index/redis/bucket_cache.py), and the time by Redis's clock (the one clock that
-- expiry is judged by).
--
-- KEYS[1]   sequence counter
-- KEYS[2]   recent inserts: the ring of entries by sequence number (lib.lua)
-- KEYS[3]   meta HASH (the index's epoch: lib.lua, changed_index)
-- ARGV[1]   the last sequence number the cache holds
-- ARGV[2]   the index's epoch, as the cache knows it
-- ARGV[3]   the first RING_CHECK bytes of the cache's entry with number ARGV[1] ("": none): its
--           fingerprint and number
--
-- Reply: {counter, unix seconds, entries}: the entries of sequence numbers ARGV[1] + 1 ..
-- counter (format.py ENTRY; a removed article's zeroed but for its number), in order; or
-- {counter, unix seconds, "", why} when the cache must reload: "behind" (the ring no longer holds
-- them all) or "rolled back" (the counter is below ARGV[1], or the ring's slot ARGV[1] holds
-- another entry than the cache's: the index lost writes the cache had seen, as when a lagging
-- replica is promoted or a restart loses the last writes, and what was written since reuses
-- their numbers).

local changed = changed_index(KEYS[3], ARGV[2])
if changed then return changed end
local now = redis.call('TIME')[1]
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local since = tonumber(ARGV[1])
if last < since then return {last, now, '', 'rolled back'} end
if ARGV[3] ~= '' and not ring_holds(KEYS[2], since, ARGV[3]) then
  return {last, now, '', last - since >= RECENT_SLOTS and 'behind' or 'rolled back'}
end
if last - since > RECENT_SLOTS then return {last, now, '', 'behind'} end
return {last, now, recent_since(KEYS[2], since, last)}
