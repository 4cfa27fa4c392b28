-- Forget articles: they no longer match, and their ids may be used again.
--
-- KEYS[1..5] docs, exact, ids, meta, recent (as in check_and_insert.lua)
-- ARGV[1]    bucket key prefix; ARGV[2] the index's epoch (lib.lua); ARGV[3] the guard
--            (lib.lua, parse_guard); ARGV[4] the key prefix of what deletions leave behind,
--            ARGV[5] for how many seconds (lib.lua, gone_key)
-- ARGV[6..]  per deletion: the article's id, and the deleting message's position in the input
--            topic (12 bytes: NO_POSITION outside a stream)
-- Reply: for each deletion, 1 if the id was in the index, else 0. A deletion seen before (its
-- position's answer is kept) gets its answer again and changes nothing; so does one older than
-- the message that decided the article the id names now (the same input partition, a lower
-- offset: a redelivery past the window), with 0.
local guard, refused = admit(KEYS[4], ARGV[2], ARGV[3])
if refused then return refused end
local gone_prefix, window = ARGV[4], tonumber(ARGV[5])
local replies = {}
for i = 6, #ARGV, 2 do
  local id, position = ARGV[i], ARGV[i + 1]
  local key = position ~= NO_POSITION and gone_key(gone_prefix, position, id)
  local answer = key and redis.call('GET', key)
  if answer and is_deletion(answer) then
    replies[#replies + 1] = tonumber(string.sub(answer, 2))
  else
    local record = redis.call('HGET', KEYS[1], id)
    if record and later_in_partition(rec_position(record), position) then
      replies[#replies + 1] = 0
    else
      if record then
        keep_gone(gone_prefix, window, id, record)
        remove_article(KEYS, ARGV[1], id, record)
      end
      replies[#replies + 1] = record and 1 or 0
      if key and window > 0 then
        redis.call('SET', key, DELETED .. replies[#replies], 'EX', window)
      end
    end
  end
end
log_removals(ARGV[1])
guard_passed(guard)
return replies
