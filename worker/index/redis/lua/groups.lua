-- Reading band and line buckets (check_bands.lua's, sent in front of it after frame.lua):
-- a bucket's postings are those of its group string that carry its check, or those of its own
-- string once it has moved there (postings.lua, SPILL).

-- Where the postings of `bucket` are in `blob` (whole postings of one string), oldest first,
-- and whether its marker is among them (it has a string of its own: postings.lua, SPILL).
local function places(blob, bucket)
  local found, from, check, marked = {}, 1, bucket[2], false
  local size = #check + POSTING_TAIL
  while true do
    local at = string.find(blob, check, from, true)
    if not at then return found, marked end
    if (at - 1) % size ~= 0 then
      from = at + 1
    else
      if string.sub(blob, at + #check, at + size - 1) == NO_NUMBER then
        marked = true
      else
        found[#found + 1] = at
      end
      from = at + size
    end
  end
end

-- The postings of `bucket` as read from `blob`, its group string, and where they are: its
-- newest `count` of its own string instead if its group holds its marker. Notes on `bucket`
-- whether it has its own string, and how many of its postings its group holds.
local function bucket_read(bucket, count, blob)
  local size = #bucket[2] + POSTING_TAIL
  local found, marked = places(blob, bucket)
  bucket.own, bucket.count = marked, #found
  if not marked then return blob, found end
  -- (postings left in the group, posted while its own string was gone, count as older)
  local own = redis.call('GETRANGE', own_key(bucket), -count * size, -1)
  local leftover = {}
  for _, at in ipairs(found) do leftover[#leftover + 1] = string.sub(blob, at, at + size - 1) end
  blob = table.concat(leftover) .. own
  found = {}
  for at = math.max(1, #blob - count * size + 1), #blob, size do found[#found + 1] = at end
  return blob, found
end

-- Move `bucket`'s postings from its group to a string of its own, with its marker left in
-- the group (postings.lua, SPILL).
local function spill(bucket)
  local blob = redis.call('GET', bucket[1])
  local size, kept, moved, from = #bucket[2] + POSTING_TAIL, {}, {}, 1
  for _, at in ipairs((places(blob, bucket))) do
    kept[#kept + 1], moved[#moved + 1] = string.sub(blob, from, at - 1),
                                         string.sub(blob, at, at + size - 1)
    from = at + size
  end
  kept[#kept + 1], kept[#kept + 2] = string.sub(blob, from), bucket[2] .. NO_NUMBER
  redis.call('SET', bucket[1], table.concat(kept))
  redis.call('APPEND', own_key(bucket), table.concat(moved))
  bucket.own = true
end

-- A posting of number `seq`, appended to each of `buckets` (a bucket read with SPILL
-- postings in its group moves them to its own string first).
local function post_all(buckets, seq)
  for _, bucket in ipairs(buckets) do
    if bucket.own == false and bucket.count >= SPILL then spill(bucket) end
    post_one(bucket, seq)
  end
end

-- The postings of `buckets`: the `newest` of each, as lists of numbers per bucket,
-- counting what was read into the article's `candidates` and `hot`.
local function read_postings(art, buckets, newest)
  local read, keys = {}, {}
  art.candidates, art.hot = 0, 0
  -- (one call for every group: a group holds at most SPILL postings of each of its buckets)
  for i, bucket in ipairs(buckets) do keys[i] = bucket[1] end
  local groups = redis.call('MGET', unpack(keys))
  for i, bucket in ipairs(buckets) do
    -- (one posting more than is read tells whether the bucket holds more)
    local blob, found = bucket_read(bucket, newest + 1, groups[i] or '')
    local first, skip = math.max(1, #found - newest + 1), #bucket[2]
    if #found > newest then art.hot = art.hot + 1 end
    local list = {}
    for k = first, #found do
      local at = found[k] + skip
      list[#list + 1] = string.sub(blob, at, at + NUMBER - 1)
    end
    art.candidates = art.candidates + #list
    read[i] = list
  end
  return read
end

-- Whether the article of `record` has expired (postings hold no time: their records say).
local function expired(record) return cutoff and rec_alive_s(record) < cutoff end

-- Take the expired articles of `records` out of their buckets (the sweep takes their records:
-- expire.lua).
local function take_out(records)
  flush()
  for _, record in ipairs(records) do unindex(KEYS, prefix, record) end
end
