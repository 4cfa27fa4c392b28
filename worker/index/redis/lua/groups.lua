-- Reading band and line buckets (check_bands.lua's, sent in front of it after frame.lua):
-- a bucket's postings are those of its group string that carry its check, or those of its own
-- string once it has moved there (postings.lua, SPILL); expired ones met are taken out.

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
      if string.sub(blob, at + #check, at + size - 1) == NO_TAIL then
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
  kept[#kept + 1], kept[#kept + 2] = string.sub(blob, from), bucket[2] .. NO_TAIL
  redis.call('SET', bucket[1], table.concat(kept))
  redis.call('APPEND', own_key(bucket), table.concat(moved))
  bucket.own = true
end

-- The postings of `buckets`: the `newest` of each, as lists of numbers per bucket,
-- counting what was read into the article's `candidates` and `hot`. Returns them and the
-- numbers of the expired ones.
local function read_postings(art, buckets, newest)
  local read, expired, keys = {}, {}, {}
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
      local seq = string.sub(blob, at, at + NUMBER - 1)
      if cutoff and struct.unpack('>I4', blob, at + NUMBER) < cutoff then
        expired[seq] = true
      else
        list[#list + 1] = seq
      end
    end
    art.candidates = art.candidates + #list
    read[i] = list
  end
  return read, expired
end

-- Take the articles whose postings numbered `numbers` were read expired out of their
-- buckets (their records say whether they have: a renewed one has a new number; the sweep
-- takes the records, expire.lua). Returns whether any was.
local function take_out_expired(numbers)
  local seqs = {}
  for seq in pairs(numbers) do seqs[#seqs + 1] = seq end
  if #seqs == 0 then return false end
  flush()
  local ids, records = owners_of(seqs)
  local any = false
  for i, seq in ipairs(seqs) do
    local record = records[i]
    if record and rec_seq(record) == seq and rec_alive_s(record) < cutoff then
      unindex(KEYS, prefix, record)
      any = true
    end
  end
  return any
end

-- The postings of an article's buckets, expired articles taken out first.
local function read_live(art, buckets, newest)
  local read, expired = read_postings(art, buckets, newest)
  if take_out_expired(expired) then read = read_postings(art, buckets, newest) end
  return read
end
