-- The worker's guesses of a batch's decisions over bands (worker/index/redis/band_guesses.py)
-- and whether they hold (sent after frame.lua, for check_bands.lua).
--
-- Every call of check_bands.lua, and every other script that takes band postings out (a
-- deletion, the expiry sweep), takes the next number of the index's count of calls and
-- leaves an entry in the log of calls (postings.lua: calls_key, posts_key, log_call): the
-- band buckets it posted under or took postings out of. A worker reads the index at one
-- count of calls (`since`) and the head of the log. A call of its batch keeps to the
-- guesses while:
--   - the log holds every call since, and call `since` is the one read (no write was lost),
--   - the batch's calls before it, all there, kept to their guesses.
-- Its articles under the buckets that other calls posted under or took postings out of since,
-- or that an article of this batch went another way than guessed under, or this call took
-- postings out of, are searched here; so is one whose guessed match is gone or one of those
-- compared expired. Every other article takes its guess, or goes the way guessed (a replay,
-- an exact copy, a short line).
local guesses = {trusted = false, foreign = {}, crowded = false, posted = {}, strayed = {},
                 absorbed = 0}
local FOREIGN_MOST = 16384
local HEAD = 8 + TOKEN + 1
local OWN = 255  -- a guess's bucket that has a string of its own

-- The log's entries of the calls after `since` up to this one's (`number`), newest first,
-- and that of call `since` (nil: not all there).
local function log_since(key, since, number)
  local count = number - 1 - since
  if count < 0 or count >= LOG_CALLS then return nil end
  local wanted = since > 0 and count + 1 or count
  local entries = wanted > 0 and redis.call('LRANGE', key, 0, wanted - 1) or {}
  if #entries ~= wanted then return nil end
  for i, entry in ipairs(entries) do
    if struct.unpack('>I8', entry) ~= number - i then return nil end
  end
  return entries
end

-- Set up the call: its number, and whether the guesses hold as it starts (`reading`: the
-- worker's since, head and token, and the call's place in its batch; since "": no guesses).
function guesses.start(shape, prefix, reading)
  local number = redis.call('INCR', calls_key(prefix))
  guesses.number = number
  guesses.token = #reading.token == TOKEN and reading.token or string.rep('-', TOKEN)
  if reading.since == '' then return end
  local since = tonumber(reading.since)
  local entries = log_since(posts_key(prefix), since, number)
  if not entries then return end
  if since > 0 and string.sub(entries[#entries], 1, HEAD) ~= reading.head then return end
  local mine, count, id = 0, 0, 9 - shape.split.from
  for i = 1, number - 1 - since do
    local entry = entries[i]
    local from = HEAD + 3
    if string.sub(entry, 9, 8 + TOKEN) == reading.token then
      if string.sub(entry, HEAD, HEAD) ~= '1' then return end
      mine = mine + 1
      entry = string.sub(entry, 1, from - 1 + id * struct.unpack('>I2', entry, HEAD + 1))
    end
    for at = from, #entry, id do guesses.foreign[string.sub(entry, at, at + id - 1)] = true end
    count = count + (#entry - from + 1) / id
    if count > FOREIGN_MOST then return end
  end
  guesses.crowded = count > 0
  guesses.trusted = mine == tonumber(reading.place) - 1
end

-- The article's band buckets, as its guess gives them or else made here.
local function buckets_of(shape, art)
  if art.buckets then return art.buckets end
  art.buckets = band_keys_of(shape, art.sketch, prefix)
  return art.buckets
end

-- An article went another way than guessed: the later ones under its buckets are searched.
local function strayed(shape, art)
  if art.fp == '' or #art.sketch ~= SKETCH then return end
  for b, bucket in ipairs(buckets_of(shape, art)) do
    local id = bucket_id(bucket, b - 1)
    guesses.foreign[id], guesses.strayed[#guesses.strayed + 1] = true, id
  end
  guesses.crowded = true
end

-- (frame.lua) The way the article goes: the guesses hold no longer from an article not
-- guessed. Buckets this call took postings out of so far are searched from here on.
function guesses.path(shape, art, taken)
  if not guesses.trusted then return end
  for i = guesses.absorbed + 1, #touched do
    guesses.foreign[touched[i]], guesses.crowded = true, true
  end
  guesses.absorbed = #touched
  if taken == 'S' then
    taken = art.line ~= '' and 'N' or (art.fp ~= '' and #art.sketch == SKETCH) and 'S' or 'X'
  end
  local guess = string.sub(art.guess, 1, 1)
  if guess == '' then
    guesses.trusted = false
  elseif guess ~= taken then
    strayed(shape, art)
  end
end

-- The worker's search of `art` (its guess 'S'), and whether it holds: its match is still the
-- article read (or one of the batch's, indexed), and none of those compared has expired.
local function guessed(shape, art)
  local g, width = art.guess, 8 - shape.split.from
  local at = 2 + shape.bands * (1 + width)
  art.buckets = {}
  for b = 0, shape.bands - 1 do
    local from = 2 + b * (1 + width)
    local held = byte(g, from)
    art.buckets[b + 1] = {group_prefix(prefix, 'b', b) .. string.sub(g, from + 1, from + 3),
                          string.sub(g, from + 4, from + width), own = held == OWN, count = held}
  end
  art.candidates, art.hot = struct.unpack('>I2', g, at), byte(g, at + 2)
  if cutoff and struct.unpack('>I4', g, at + 3) < cutoff then return nil, false end
  if #g == at + 6 then return nil, true end
  local seq, owner = string.sub(g, at + 7, at + 6 + NUMBER), string.sub(g, at + 9 + NUMBER)
  local record = record_of(owner)
  if not record or rec_seq(record) == NO_NUMBER then return nil, false end
  if seq ~= NO_NUMBER and rec_seq(record) ~= seq then return nil, false end
  return {owner = owner, record = record, agreeing = byte(g, at + 7 + NUMBER),
          d = byte(g, at + 8 + NUMBER), near = true, fp = rec_fingerprint(record)}, true
end

-- The id of the match the guess names ("" for none).
local function guessed_owner(shape, art)
  local at = 2 + shape.bands * (9 - shape.split.from)
  return string.sub(art.guess, at + 9 + NUMBER)
end

-- Whether any of the article's buckets is among those searched here.
local function crowded(shape, art)
  if not guesses.crowded then return false end
  local g, width = art.guess, 8 - shape.split.from
  for b = 0, shape.bands - 1 do
    local from = 3 + b * (1 + width)
    if guesses.foreign[string.char(b) .. string.sub(g, from, from + width - 1)] then
      return true
    end
  end
  return false
end

-- An article's match by its bands: its guess where it holds, else `search(art)`'s.
function guesses.search(shape, art, search)
  if not guesses.trusted or string.sub(art.guess, 1, 1) ~= 'S' then return search(art) end
  if not crowded(shape, art) then
    local best, holds = guessed(shape, art)
    if holds then return best end
  end
  local best = search(art)
  if (best and best.owner or '') ~= guessed_owner(shape, art) then strayed(shape, art) end
  return best
end

-- Note that the call posted an article under `buckets`, of bands `bands` (0-based).
function guesses.posted_under(buckets, bands)
  for i, bucket in ipairs(buckets) do
    guesses.posted[#guesses.posted + 1] = bucket_id(bucket, bands[i])
  end
end

-- The call's entry in the log: the buckets its articles went another way than guessed under,
-- and those it took postings out of, are searched by every later call (its batch's too).
function guesses.finish(prefix)
  for _, id in ipairs(touched) do guesses.strayed[#guesses.strayed + 1] = id end
  log_call(prefix, guesses.number, guesses.token, guesses.trusted, guesses.strayed,
           guesses.posted)
end
