-- Check-and-insert over SimHash tables: an article's search and its insert (after tables.lua,
-- which reads the call's arguments).
--
-- An article's search (near_match): with a snapshot, the caller
-- has found the article's nearest entries in its probed buckets as they were (one read, so the
-- counter and the buckets agree), which takes that work off Redis's one thread; what was
-- inserted since has a higher sequence number and sits in the recent ring, and is added here
-- (search_since): what other calls inserted, by comparing the ring's entries; what this call
-- inserted, from the caller's list of the earlier articles within radius (the caller compares
-- them far faster than Lua), and the entries it renewed; the same for the earlier calls whose
-- records the caller names (sent before this one's replies were read, so the read predates
-- them): their numbers are left out of the ring, and the entries of the articles the caller
-- lists are taken from the ring by their numbers in the records. A record gone (expired, or
-- its call failed) leaves its entries in the ring. Every candidate is checked to still
-- be indexed, and compared by its sketch. If the ring has wrapped since, the counter is
-- below the snapshot (the index lost writes), or a full list from the caller held an entry no
-- longer indexed or expired since (one beyond it might then count), the buckets are searched
-- here after all (search_buckets).

-- The caller's nearest entries, then every entry inserted since its snapshot. Returns false
-- when that cannot decide (see the header), else the best match or nil.
local function search_since(art, since)
  local list = {seqs = {}}
  for at = 1, #art.found, ENTRY do add_candidate(art, list, art.found, at, true) end
  local full = #art.found >= max_candidates * ENTRY
  art.candidates, art.hot = art.read_candidates, art.read_hot
  for i = art.expired_from, art.expired_to do
    local blob = cutoff and redis.call('GET', ARGV[i])
    if blob then cut_expired(ARGV[i], blob, cutoff) end
  end
  local last = counter
  -- (a counter below the snapshot: the index lost writes since the read)
  if last < since or since > first_seq or last - since > RECENT_SLOTS then return false end
  local ring = before_call[since]
  if not ring then
    -- (without the numbers the earlier calls' records cover)
    local parts, from = {}, since
    for _, range in ipairs(skipped) do
      if range[2] > from then
        parts[#parts + 1] = recent_since(KEYS[5], from, math.min(range[1], first_seq))
        from = range[2]
      end
    end
    parts[#parts + 1] = recent_since(KEYS[5], from, first_seq)
    ring = live_entries(table.concat(parts))
    before_call[since] = ring
  end
  -- Whether the entry at blob[at] is still in its ring slot: one read earlier in this call,
  -- or this call's own, may have been removed or renewed since.
  local function still_in_ring(blob, at)
    local number = unpack_number(blob, at + ENTRY_SEQ)
    local entry = string.sub(blob, at, at + ENTRY - 1)
    if number > written then return pending.ring[number - written] == entry end
    local offset = recent_offset(number)
    return redis.call('GETRANGE', KEYS[5], offset, offset + ENTRY - 1) == entry
  end
  local blob = ring.blob
  local function compare(at)
    if distance(art.f, blob, at) <= radius and reachable(art, string.sub(blob, at, at + 7))
        and still_in_ring(blob, at) then
      add_candidate(art, list, blob, at, false)
    end
  end
  if #ring / 2 >= BLOCKS_FROM then
    -- The entries that share a block with the article, or come within one bit of it.
    local index, compared = by_block(ring, BLOCKS), {}
    local high, low = halves(art.fp, 1)
    for j, b in ipairs(BLOCKS) do
      local t, v, flips = index[j], block_value(b, high, low), b.flips
      for n = 0, #flips do
        local places = t[n == 0 and v or bxor(v, flips[n])]
        if places then
          for i = 1, #places do
            local at = places[i]
            if not compared[at] then
              compared[at] = true
              compare(at)
            end
          end
        end
      end
    end
  else
    -- The high halves first: most entries are too far there already. The bits of their XOR
    -- are counted a byte at a time with arithmetic, which costs Lua less than calling the
    -- bit library for each byte. Whether the article's probes reach an entry is asked last:
    -- the first time, it builds every probed key.
    local high = high_half(art.fp, 1)
    for n = 1, #ring, 2 do
      local x = bxor(ring[n], high) % 4294967296
      local b1 = x % 256
      x = (x - b1) / 256
      local b2 = x % 256
      x = (x - b2) / 256
      local b3 = x % 256
      if BITS_SET[b1] + BITS_SET[b2] + BITS_SET[b3] + BITS_SET[(x - b3) / 256] <= radius then
        compare(ring[n + 1])
      end
    end
  end
  local seen = #ring / 2
  -- This call's own entries (later calls find them in the ring): those within radius, unless
  -- removed or renewed since they were written.
  local function add_own(entry)
    seen = seen + 1
    if distance(art.f, entry, 1) <= radius and reachable(art, string.sub(entry, 1, 8))
        and still_in_ring(entry, 1) then
      add_candidate(art, list, entry, 1, false)
    end
  end
  for at = 1, #art.earlier, 2 do
    local entry = inserted[struct.unpack('>I2', art.earlier, at)]
    if entry then add_own(entry) end
  end
  for _, entry in ipairs(renewed) do add_own(entry) end
  -- The earlier calls' entries, as the ring holds them (unless removed since).
  local function add_numbered(seq)
    local offset = recent_offset(seq)
    local entry = redis.call('GETRANGE', KEYS[5], offset, offset + ENTRY - 1)
    if entry_seen_s(entry, 1) ~= 0 then add_own(entry) end
  end
  for at = 1, #art.earlier_calls, 4 do
    local seq = earlier_calls[struct.unpack('>I4', art.earlier_calls, at)]
    if seq then add_numbered(seq) end
  end
  for _, seq in ipairs(earlier_renewed) do add_numbered(seq) end
  art.candidates = art.candidates + seen
  local best, stale = judge(art, list)
  if (stale or list.dropped) and full then return false end
  return best
end

-- Every entry of the article's probed buckets, compared here.
local function search_buckets(art)
  art.candidates, art.hot = 0, 0
  local list = {seqs = {}}
  local keys, owners = {}, {}
  for j, t in ipairs(tables) do probe_keys(t, art.keys[j], keys, owners) end
  local f = art.f
  for first = 1, #keys, MGET_CHUNK do
    local last = math.min(first + MGET_CHUNK - 1, #keys)
    for j, blob in ipairs(redis.call('MGET', unpack(keys, first, last))) do
      if blob and cutoff then blob = cut_expired(keys[first + j - 1], blob, cutoff) end
      if blob then
        -- This table's key nearly fixes one half of a candidate: compare the other first.
        local h = owners[first + j - 1].half
        local p1, p2, p3, p4 = f[1 + h], f[2 + h], f[3 + h], f[4 + h]
        local n = #blob / ENTRY
        local start = 0
        if n > max_read then start, art.hot = n - max_read, art.hot + 1 end
        art.candidates = art.candidates + n - start
        for at = start * ENTRY + 1, #blob, ENTRY do
          local a, b, c, e = byte(blob, at + h, at + h + 3)
          if BITS_SET[bxor(a, p1)] + BITS_SET[bxor(b, p2)] + BITS_SET[bxor(c, p3)]
              + BITS_SET[bxor(e, p4)] <= radius then
            add_candidate(art, list, blob, at, false)
          end
        end
      end
    end
  end
  return (judge(art, list))
end

-- The best earlier match within radius (a short line's: lines.lua), or nil.
local function near_match(art)
  if art.line ~= '' then
    return lines.search(art, line_split_of(), LINE_NEWEST,
                        function(_, fp) return distance(art.f, fp, 1) end)
  end
  if art.fp == '' or max_read <= 0 then return nil end
  if art.snapshot ~= '' and snapshots_hold then
    local best = search_since(art, tonumber(art.snapshot))
    if best ~= false then return best end
  end
  return search_buckets(art)
end

-- Index an article that exact_match found no live article for: its content hash is now its
-- (a hash naming an article whose record is lost is taken over), and with a fingerprint an
-- entry in every table and in the ring. Returns its sequence number (NO_NUMBER without
-- a fingerprint) and its entry (nil without).
local function insert(art, place)
  pending.first[art.content] = art.id
  if art.line ~= '' then return add_line(art.id, art.line, art.buckets) end
  if art.fp == '' then return NO_NUMBER end
  local names = {}
  for j, t in ipairs(tables) do names[j] = bucket(t, art.keys[j]) end
  local seq
  seq, inserted[place] = add_entry(art.id, art.fp, names)
  return seq
end

-- The article (`held`: its record) moves to the end of its buckets under a new number
-- (frame.lua, renew).
local function reindex(id, held)
  local line = redis.call('HGET', lines_key(prefix), rec_seq(held))
  unindex(KEYS, prefix, held)
  if line then return add_line(id, line) end
  local fp = rec_fingerprint(held)
  local spec = redis.call('HGET', KEYS[4], 'tables')
  local seq, entry = add_entry(id, fp, bucket_keys_of(spec, fp, prefix))
  renewed[#renewed + 1] = entry
  return seq
end

local replies = decide_all(calls_from + 2 * tonumber(ARGV[after_tables + 3]), {
  parse = parse_article, search = near_match, insert = insert, reindex = reindex,
  distance = function(art, fp) return distance(art.f, fp, 1) end})
if record_key ~= '' then
  local held = {struct.pack('>I6I6I2', first_seq, counter, #replies)}
  for place = 1, #replies do
    held[#held + 1] = inserted[place] and entry_seq(inserted[place], 1) or NO_NUMBER
  end
  for _, entry in ipairs(renewed) do held[#held + 1] = entry_seq(entry, 1) end
  redis.call('SET', record_key, table.concat(held), 'EX', CALL_RECORD_S)
end
guard_passed(guard)
return replies
