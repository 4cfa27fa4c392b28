-- Cutting expired articles' band postings out of their groups, after the expiry sweep's
-- front has passed their numbers (expire.lua's part; after lib.lua, postings.lua and
-- removal.lua).
--
-- The front takes an expired article out of its record and the ids hash, and leaves its
-- band postings: searches pass over numbers below the front (check_bands.lua, and the
-- worker's guesses). Cutting them at once took a GET and a SET of each of its 16 groups;
-- this cuts the postings of many articles from a group in one. A cursor walks every group of
-- every band, paced by the removals: each removal owes the walk COMPACT_PACE / (the records
-- held) of a full round, so that a posting left is cut within the next 1 / COMPACT_PACE of
-- the records removed, and those left are about 1 / COMPACT_PACE of the live ones at most. A
-- number below the front is no article's (the front stops at the first live article), so
-- telling a dead posting costs no lookup.
local COMPACT_PACE = 4
-- What a group visited counts against a step's bytes besides those it holds: a GET costs
-- about this much whether or not the group exists (an index far below the size its groups
-- were made for has many empty ones).
local VISIT_BYTES = 256

-- The postings of `blob` (postings of `size` bytes whose number starts `skip` bytes in)
-- whose number is `front` (NUMBER bytes) or later; those cut are noted in `cut` by their
-- check.
local function live_postings(blob, size, skip, front, cut)
  local kept, from, dropped = {}, 1, false
  for at = 1, #blob, size do
    -- (big-endian numbers of one size compare as strings; a marker's is NO_NUMBER)
    local number = string.sub(blob, at + skip, at + skip + NUMBER - 1)
    if number < front and number ~= NO_NUMBER then
      if from < at then kept[#kept + 1] = string.sub(blob, from, at - 1) end
      from, dropped = at + size, true
      cut[string.sub(blob, at, at + skip - 1)] = true
    end
  end
  if not dropped then return nil end
  kept[#kept + 1] = string.sub(blob, from)
  return table.concat(kept)
end

-- Cut the dead postings of group string `key` of band `b` (its checks `width` bytes) and of
-- its buckets' own strings. Searches pass over those postings, but a bucket with a string
-- of its own is read in part (its newest), so what is cut there can change what is read:
-- such buckets go to `touched`, the log of calls. Returns the bytes read.
local function compact_group(key, b, width, front)
  local blob = redis.call('GET', key)
  if not blob then return 0 end
  local size, read, cut, owners = width + NUMBER, #blob, {}, {}
  local kept = live_postings(blob, size, width, front, cut)
  if kept then store(key, kept) end
  for at = 1, #blob, size do
    if string.sub(blob, at + width, at + width + NUMBER - 1) == NO_NUMBER then
      local check = string.sub(blob, at, at + width - 1)
      owners[check] = true
      local held = redis.call('GET', key .. check)
      if held then
        read = read + #held
        local left = live_postings(held, size, width, front, cut)
        if left then store(key .. check, left) end
      end
    end
  end
  local group = string.char(b) .. string.sub(key, -3)
  for check in pairs(cut) do
    if owners[check] then touched[#touched + 1] = group .. check end
  end
  return read
end

-- Walk the groups this step's `removed` removals owe (at most `most` bytes read), from the
-- walk's place in `walk` (a hash: where it is, what it owes). `records`: how many the
-- index holds; `front`: the sweep's front (a number).
local function compact(meta, walk, prefix, removed, records, front, most)
  local shape = layout_of(meta)
  if not shape then return end
  local bits = shape.groups
  local per_band = 2 ^ bits
  local all = shape.bands * per_band
  local held = redis.call('HMGET', walk, 'at', 'owed')
  local at, owed = tonumber(held[1] or '0'), tonumber(held[2] or '0')
  -- (at most COMPACT_PACE rounds: what the whole index expiring at once owes)
  owed = math.min(COMPACT_PACE * all, owed + removed * COMPACT_PACE * all / math.max(records, 1))
  local width, read, low = math.ceil((32 - bits) / 8), 0, pack_number(front)
  while owed >= 1 and read < most do
    local b, group = math.floor(at / per_band), at % per_band
    local key = group_prefix(prefix, 'b', b) .. string.char(math.floor(group / 65536),
                                                            math.floor(group / 256) % 256,
                                                            group % 256)
    read = read + VISIT_BYTES + compact_group(key, b, width, low)
    at, owed = (at + 1) % all, owed - 1
  end
  redis.call('HSET', walk, 'at', at, 'owed', owed)
end
