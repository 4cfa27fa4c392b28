-- Forget articles: they no longer match, and their ids may be used again.
--
-- KEYS[1..5] docs, exact, ids, meta, recent (as in check_and_insert.lua)
-- ARGV[1]    bucket key prefix; ARGV[2] the index's epoch (lib.lua); ARGV[3] the key prefix of
--            records kept after a deletion, ARGV[4] for how many seconds (lib.lua, keep_gone);
--            ARGV[5..] article ids
-- Reply: for each id, 1 if it was in the index, else 0.
local changed = changed_index(KEYS[4], ARGV[2])
if changed then return changed end
local replies = {}
for i = 5, #ARGV do
  local record = redis.call('HGET', KEYS[1], ARGV[i])
  if record then
    keep_gone(ARGV[3], tonumber(ARGV[4]), ARGV[i], record)
    remove_article(KEYS, ARGV[1], ARGV[i], record)
  end
  replies[#replies + 1] = record and 1 or 0
end
return replies
