-- One step of the sweep that reclaims articles older than the retention window.
--
-- Two parts. The front: numbers are given out in the order articles start their retention
-- (a renewed article takes a new one), so the indexed articles expire in number order. The
-- front walks the ids hashes from the lowest number not yet known to be live, removes what
-- has expired and stops at the first article that has not: an article leaves the buckets
-- soon after it expires, whatever the index holds. The pass: a cursor over every record,
-- which reclaims what the front cannot reach (exact copies' records, which have no number;
-- the records of expired articles a check took out of their buckets). Then, with bands, the
-- walk that cuts the band postings they left (compact.lua).
--
-- KEYS[1..5] docs, exact, ids, meta, recent (as in check_and_insert.lua)
-- KEYS[6]    the pass's cursor into docs; KEYS[7] the counter of numbers; KEYS[8] the walk
--            over the band groups (compact.lua); all shared by every worker. The front is a
--            number in meta (field `front`), where every search reads it.
-- ARGV[1]    bucket key prefix; ARGV[2] retention in seconds; ARGV[3] the most articles the
--            front removes (it starts no further ids hash once it has read twice as many
--            hashes and records); ARGV[4] the index's epoch (lib.lua); ARGV[5] the records
--            the pass looks at, in a step whose front has caught up (one that removed
--            ARGV[3] leaves the pass for a later step); ARGV[6] the most bytes of band
--            postings the walk reads in a step
-- Reply: {records removed, the pass's cursor after this step ("0": a full pass ended)}
local changed = changed_index(KEYS[4], ARGV[4])
if changed then return changed end
local now = redis.call('TIME')
local cutoff = tonumber(now[1]) - tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local removed = 0

local last = tonumber(redis.call('GET', KEYS[7]) or '0')
local front = tonumber(redis.call('HGET', KEYS[4], 'front') or '1')
if front > last + 1 then front = 1 end  -- (a counter made again)
local looked = 0  -- (ids hashes and records read: numbers deleted or renewed cost a look)
while front <= last and removed < limit and looked < 2 * limit do
  local held = redis.call('HGETALL', ids_key(KEYS, pack_number(front)))
  local numbers, ids = {}, {}
  for i = 1, #held, 2 do
    local n = unpack_number(held[i])
    if n >= front then
      numbers[#numbers + 1] = n
      ids[n] = held[i + 1]
    end
  end
  table.sort(numbers)
  looked = looked + 1
  local stop
  for _, n in ipairs(numbers) do
    if removed >= limit then stop = n break end
    local record = redis.call('HGET', KEYS[1], ids[n])
    looked = looked + 1
    if record and rec_seq(record) == pack_number(n) then
      if rec_alive_s(record) >= cutoff then stop = n break end
      remove_article(KEYS, ARGV[1], ids[n], record, cutoff, true)
      removed = removed + 1
    end
  end
  if stop then
    front = stop
    break
  end
  -- (numbers past the counter are given out later: the front waits for them)
  front = math.min(front - (front % IDS_PER_HASH) + IDS_PER_HASH, last + 1)
end
redis.call('HSET', KEYS[4], 'front', front)

local function done(cursor)
  if removed > 0 or redis.call('EXISTS', KEYS[8]) == 1 then
    compact(KEYS[4], KEYS[8], ARGV[1], removed, redis.call('HLEN', KEYS[1]), front,
            tonumber(ARGV[6]))
  end
  log_removals(ARGV[1])
  return {removed, cursor}
end

if removed >= limit then return done(redis.call('GET', KEYS[6]) or '0') end

local page = redis.call('HSCAN', KEYS[1], redis.call('GET', KEYS[6]) or '0', 'COUNT', ARGV[5])
local fields = page[2]
for i = 1, #fields, 2 do
  if rec_alive_s(fields[i + 1]) < cutoff then
    remove_article(KEYS, ARGV[1], fields[i], fields[i + 1], cutoff)
    removed = removed + 1
  end
end
if page[1] == '0' then redis.call('DEL', KEYS[6]) else redis.call('SET', KEYS[6], page[1]) end
return done(page[1])
