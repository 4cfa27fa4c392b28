-- Short lines judged by their words (worker/text/lines.py), in every layout (sent after
-- groups.lua): a text of 4-20 units keeps its units, is found under its line buckets and is
-- judged by its units (line_rule); it is posted under its line buckets alone, so it meets only
-- other short lines. Its sequence number names no table entry: over SimHash tables its ring
-- entry is zeroed but for the number, as a removed article's is.
local LINE_NEAR_LONG = 7  -- (worker/text/lines.py, line_rule) lines this long may differ by 2
-- (worker/text/lines.py) a line bucket's newest postings read where the layout does not say
local LINE_NEWEST = 32
local lines = {}

-- A line's units (2 bytes each), as numbers.
local function units_of(line)
  local bytes, out = {byte(line, 1, -1)}, {}
  for k = 1, #bytes, 2 do out[#out + 1] = bytes[k] * 256 + bytes[k + 1] end
  return out
end

-- Word edit distance between two lines' units (units_of) when it is at most `limit`, else
-- limit + 1: only the cells within `limit` of the diagonal are computed.
local function line_distance(a, b, limit)
  local n, m, over = #a, #b, limit + 1
  if math.abs(n - m) > limit then return over end
  local previous = {}
  for j = 0, math.min(m, limit) do previous[j] = j end
  for i = 1, n do
    local current, least = {}, over
    for j = math.max(0, i - limit), math.min(m, i + limit) do
      local v = i
      if j > 0 then
        v = (previous[j - 1] or over) + (a[i] == b[j] and 0 or 1)
        v = math.min(v, (previous[j] or over) + 1, (current[j - 1] or over) + 1, over)
      end
      current[j] = v
      if v < least then least = v end
    end
    if least > limit then return over end
    previous = current
  end
  return previous[m] or over
end

-- The share of the two lines' distinct units that they have in common.
local function line_similarity(a, b)
  local x, y, both, either = {}, {}, 0, 0
  for at = 1, #a, 2 do x[string.sub(a, at, at + 1)] = true end
  for at = 1, #b, 2 do y[string.sub(b, at, at + 1)] = true end
  for unit in pairs(x) do
    either = either + 1
    if y[unit] then both = both + 1 end
  end
  for unit in pairs(y) do if not x[unit] then either = either + 1 end end
  return either == 0 and 1 or both / either
end

-- A short line's match: of every posting read (the `newest` of each of its buckets; `split`:
-- postings.lua, split_of), the line fewest units away that line_rule makes a near-duplicate
-- (between equals, the first seen). Its `agreeing` holds the lines' similarity in
-- hundredths, from LINE_SIMILARITY (lib.lua). A line is indexed while the lines hash holds it
-- (postings.lua), so only the match's id is looked up. `distance(art, fp)`: the bits between
-- the article's fingerprint and `fp`.
function lines.search(art, split, newest, distance)
  local units = line_units(art.line)
  local mine = units_of(units)
  art.buckets = line_keys_of(art.line, prefix, split)
  local read = read_postings(art, art.buckets, newest)
  local seqs, seen = {}, {}
  for _, list in ipairs(read) do
    for _, seq in ipairs(list) do
      if not seen[seq] then seen[seq], seqs[#seqs + 1] = true, seq end
    end
  end
  if #seqs == 0 then return nil end
  local held = redis.call('HMGET', lines_key(prefix), unpack(seqs))
  local has = {}
  for _, unit in ipairs(mine) do has[unit] = true end
  local near = {}
  for i, seq in ipairs(seqs) do
    local other = held[i] or pending.line[seq]
    if other then
      local theirs = units_of(line_units(other))
      local longer = math.max(#mine, #theirs)
      local limit = longer >= LINE_NEAR_LONG and 2 or 1
      -- (units of theirs not in mine must change: too many, and no alignment is asked for)
      local shared = 0
      for _, unit in ipairs(theirs) do if has[unit] then shared = shared + 1 end end
      if longer - shared <= limit then
        local d = line_distance(mine, theirs, limit)
        if d <= limit then near[#near + 1] = {d, seq, line_units(other)} end
      end
    end
  end
  -- (big-endian numbers of one size compare as strings)
  table.sort(near, function(x, y) return x[1] < y[1] or (x[1] == y[1] and x[2] < y[2]) end)
  for _, found in ipairs(near) do
    local seq = found[2]
    local owner = pending.owner[seq] or redis.call('HGET', ids_key(KEYS, seq), seq)
    local record = owner and owner ~= art.id and record_of(owner)
    if record and expired(record) then
      take_out({record})
    elseif record then
      local fp = rec_has_fingerprint(record) and rec_fingerprint(record) or nil
      local similarity = line_similarity(units, found[3])
      return {owner = owner, record = record, near = true, fp = fp,
              d = (fp and art.fp ~= '') and distance(art, fp) or NO_DISTANCE,
              agreeing = LINE_SIMILARITY + math.floor(similarity * 100 + 0.5)}
    end
  end
  return nil
end

-- Index a short line under number `seq` (new_number's): its postings (in `buckets`, as its
-- search read them, if it searched), and its units and keys in the lines hash at the next
-- flush.
function lines.post(line, seq, split, buckets)
  pending.line[seq] = line
  post_all(buckets or line_keys_of(line, prefix, split), seq)
end
