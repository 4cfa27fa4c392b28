-- Check-and-insert over bands of the set sketch (frame.lua runs each article; this script
-- gives its search and its insert), as the memory index does with BandPostings and
-- LinePostings (worker/index/postings.py). worker/index/redis/band_calls.py builds the
-- arguments.
--
-- KEYS and ARGV[1..FRAME_ARGS]: frame.lua's. Then, shared by the group (A = FRAME_ARGS):
-- ARGV[A+1]  sketch bins a duplicate agrees on, at least
-- ARGV[A+2]  the most candidates compared by their sketches (those sharing the most bands)
-- ARGV[A+3]  the newest postings read from each bucket
-- ARGV[A+4..A+7]  what the worker's guesses were made from (guesses.lua): the index's count
--            of calls then ("": no guesses), the head of its log of calls, the batch's token
--            (TOKEN bytes), and this call's place in the batch (from 1)
-- Then per article, one after another: id; content hash, 16 raw bytes; fingerprint, 8 raw
-- bytes big-endian, or "" when the text is too short; its sketch (SKETCH bytes), or ""; the
-- message's position in the input topic (12 bytes: NO_POSITION outside a stream); its short
-- line ("" for none): its units (2 bytes each), then its LINE_BANDS keys (LINE_KEY bytes each);
-- the worker's guess of its way ("" for none): 'R' a replay, 'E' an exact copy, 'N' a short
-- line, 'X' neither line nor sketch, or 'S' and its search: per band its bucket's postings in
-- its group (OWN: a string of its own), group (3 bytes) and check (guesses.lua), the
-- postings read (2 bytes), the buckets read in
-- part (1), the oldest first-seen second of those compared (4), then its match, if any:
-- number (NO_NUMBER: one of the batch's), sketch bins agreeing, distance, id.
--
-- A short line is found by its line buckets and judged by its units (line_rule); any other
-- article with a sketch by its band buckets, the `compared` postings sharing the most bands
-- with it (between equals, the newest; numbers below the expiry sweep's front passed over),
-- judged by their sketches. A near-duplicate is posted
-- only under the bands it does not share with its match, and is its match's dependent
-- (removal.lua, unpost_bands). An expired article met among those compared is taken out of
-- its buckets there and then (its dependents posted), and the search runs again.
local A = FRAME_ARGS
local duplicate_bins, compared = tonumber(ARGV[A + 1]), tonumber(ARGV[A + 2])
local newest = tonumber(ARGV[A + 3])
local shape = layout_of(KEYS[4])
guesses.start(shape, prefix, {since = ARGV[A + 4], head = ARGV[A + 5], token = ARGV[A + 6],
                       place = ARGV[A + 7]})

local function parse_article(a)
  local art = {id = ARGV[a], content = ARGV[a + 1], fp = ARGV[a + 2], sketch = ARGV[a + 3],
               position = ARGV[a + 4], line = ARGV[a + 5], guess = ARGV[a + 6], candidates = 0,
               hot = 0}
  return art, a + 7
end

-- Whether key `x` comes before key `y` (lists compared item by item).
local function before(x, y)
  for i = 1, #x do
    if x[i] ~= y[i] then return x[i] < y[i] end
  end
  return false
end

-- Bits that differ between two 8-byte fingerprints.
local function distance(art, fp)
  local d = 0
  for i = 1, 8 do
    local x = bit.bxor(byte(art.fp, i), byte(fp, i))
    while x ~= 0 do
      x = bit.band(x, x - 1)
      d = d + 1
    end
  end
  return d
end

-- An article's match by its sketch among the postings of its bands.
local function search_bands(art)
  art.buckets = band_keys_of(shape, art.sketch, prefix)
  local read = read_postings(art, art.buckets, newest)
  local shared, seqs, front = {}, {}, shape.front
  for _, list in ipairs(read) do
    for _, seq in ipairs(list) do
      if shared[seq] then shared[seq] = shared[seq] + 1
      elseif seq >= front then shared[seq], seqs[#seqs + 1] = 1, seq
      else shared[seq] = 0 end  -- (below the sweep's front: no one's, left for its walk)
    end
  end
  if #seqs > compared then  -- (else each is compared: their order does not matter)
    -- (big-endian numbers of one size compare as strings)
    table.sort(seqs, function(x, y)
      return shared[x] > shared[y] or (shared[x] == shared[y] and x > y)
    end)
    for i = compared + 1, #seqs do seqs[i] = nil end
  end
  local ids, records = owners_of(seqs)
  local best, best_key, gone = nil, nil, {}
  for i, seq in ipairs(seqs) do
    local record = records[i]
    if record and rec_seq(record) == seq and expired(record) then
      gone[#gone + 1] = record
    elseif record and rec_seq(record) == seq and ids[i] ~= art.id then
      local n = agreeing(art.sketch, rec_sketch(record), duplicate_bins)
      if n >= duplicate_bins then
        local fp = rec_fingerprint(record)
        local d = distance(art, fp)
        local key = {-n, d, seq}
        if not best_key or before(key, best_key) then
          best_key = key
          best = {owner = ids[i], record = record, d = d, agreeing = n, near = true, fp = fp}
        end
      end
    end
  end
  -- (the expired may have kept others from being compared)
  if #gone > 0 then
    take_out(gone)
    return search_bands(art)
  end
  return best
end

local function search(art)
  if art.line ~= '' then return lines.search(art, shape.split, newest, distance) end
  if art.fp == '' or #art.sketch ~= SKETCH then return nil end
  return guesses.search(shape, art, search_bands)
end

-- Index an article: its content hash is now its, and a short line is posted under its line
-- buckets, any other article with a sketch under the bands it does not share with `match`.
local function insert(art, place, match)
  pending.first[art.content] = art.id
  if art.line ~= '' then
    local seq = new_number(art.id)
    lines.post(art.line, seq, shape.split, art.buckets)
    return seq
  end
  if art.fp == '' or #art.sketch ~= SKETCH then return NO_NUMBER end
  local seq = new_number(art.id)
  local mine = art.buckets or band_keys_of(shape, art.sketch, prefix)
  local theirs = match and rec_has_fingerprint(match.record) and rec_sketch(match.record)
  local novel, bands, skipped = {}, {}, false
  for b, bucket in ipairs(mine) do
    if theirs and band_bins(shape, art.sketch, b - 1) == band_bins(shape, theirs, b - 1) then
      skipped = true
    else
      novel[#novel + 1], bands[#bands + 1] = bucket, b - 1
    end
  end
  post_all(novel, seq)
  guesses.posted_under(novel, bands)
  if skipped then redis.call('APPEND', dependents_key(prefix, rec_seq(match.record)), seq) end
  return seq
end

-- (frame.lua, renew) Posted again under a new number, under every band; its dependents move
-- with it.
local function reindex(id, held)
  local line = redis.call('HGET', lines_key(prefix), rec_seq(held))
  local seq = new_number(id)
  unindex(KEYS, prefix, held, nil, seq)
  if line then
    lines.post(line, seq, shape.split)
  else
    post_all(band_keys_of(shape, rec_sketch(held), prefix), seq)
  end
  return seq
end

local replies = decide_all(A + 8, {parse = parse_article, search = search, insert = insert,
                                   reindex = reindex, distance = distance,
                                   path = function(art, taken) guesses.path(shape, art, taken) end})
guesses.finish(prefix)
guard_passed(guard)
return replies
