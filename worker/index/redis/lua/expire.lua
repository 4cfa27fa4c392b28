-- One step of the sweep that reclaims articles older than the retention window, including
-- those that nothing reads any more (duplicates' records, buckets no article probes).
--
-- KEYS[1..5] docs, exact, ids, meta, recent (as in check_and_insert.lua)
-- KEYS[6]    the sweep's cursor into docs, shared by every worker
-- ARGV[1]    bucket key prefix; ARGV[2] retention in seconds; ARGV[3] records to look at;
--            ARGV[4] the index's epoch (lib.lua)
-- Reply: {records removed, the cursor after this step ("0": a full pass ended)}
local changed = changed_index(KEYS[4], ARGV[4])
if changed then return changed end
local now = redis.call('TIME')
local cutoff = tonumber(now[1]) - tonumber(ARGV[2])
local page = redis.call('HSCAN', KEYS[1], redis.call('GET', KEYS[6]) or '0',
                        'COUNT', ARGV[3])
local removed = 0
local fields = page[2]
for i = 1, #fields, 2 do
  if rec_alive_s(fields[i + 1]) < cutoff then
    remove_article(KEYS, ARGV[1], fields[i], fields[i + 1], cutoff)
    removed = removed + 1
  end
end
if page[1] == '0' then redis.call('DEL', KEYS[6]) else redis.call('SET', KEYS[6], page[1]) end
log_removals(ARGV[1])
return {removed, page[1]}
