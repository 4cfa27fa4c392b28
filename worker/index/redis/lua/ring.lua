-- The recent ring's entries and Hamming distances, for check_and_insert.lua (sent after
-- frame.lua, in front of it): the entries near an article are found by blocks when there are
-- many, and distances are counted byte by byte.
local bxor = bit.bxor

-- Bits set in each byte value. A byte-wise Hamming distance with this table costs a few C
-- calls per candidate, fewer than a 32-bit popcount with bit operations.
local BITS_SET = {[0] = 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 1, 2, 2, 3, 2, 3, 3, 4, 2,
  3, 3, 4, 3, 4, 4, 5, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7, 4, 5, 5, 6, 5, 6, 6, 7, 5,
  6, 6, 7, 6, 7, 7, 8}

-- The ring's entries within radius of an article are found by blocks when there are many: each
-- 32-bit half of a fingerprint is cut into the same number of blocks, 2 * #blocks > radius, so
-- that two fingerprints within radius bits have a block within one bit of the other's (else they
-- would differ in two bits or more in every block). An article then looks up its blocks and
-- their one-bit neighbours, ~70 lookups, rather than comparing every entry: exactly the
-- entries within radius, and some others, which are then compared.
local function ring_blocks(radius)
  local blocks = {}
  local per_half = math.ceil((math.floor(radius / 2) + 1) / 2)
  for half = 1, 2 do
    local left = 32
    for i = per_half, 1, -1 do
      local width = math.ceil(left / i)
      left = left - width
      local flips = {}
      for b = 0, width - 1 do flips[b + 1] = bit.lshift(1, b) end
      blocks[#blocks + 1] = {half = half, shift = left, flips = flips,
                             mask = width == 32 and -1 or bit.lshift(1, width) - 1}
    end
  end
  return blocks
end
-- Below about this many entries, comparing each costs Lua less than an article's lookups.
local BLOCKS_FROM = 100

-- The high half (bytes 1-4) of the fingerprint at blob[at], as a number.
local function high_half(blob, at)
  local a, b, c, e = byte(blob, at, at + 3)
  return ((a * 256 + b) * 256 + c) * 256 + e
end

-- The live entries of a run of ring entries (a removed article's has its seen time zeroed):
-- {blob = the run, then per live entry its high half and its place in blob}.
-- Parsed once for every article compared with them.
local function live_entries(blob)
  local live = {blob = blob}
  for at = 1, #blob, ENTRY do
    if entry_seen_s(blob, at) ~= 0 then
      live[#live + 1], live[#live + 2] = high_half(blob, at), at
    end
  end
  return live
end

-- The two 32-bit halves of the fingerprint at blob[at] (bit library numbers).
local function halves(blob, at)
  local a1, a2, a3, a4, a5, a6, a7, a8 = byte(blob, at, at + 7)
  return bit.bor(bit.lshift(a1, 24), bit.lshift(a2, 16), bit.lshift(a3, 8), a4),
    bit.bor(bit.lshift(a5, 24), bit.lshift(a6, 16), bit.lshift(a7, 8), a8)
end

-- Block `b`'s value in a fingerprint of halves `high` and `low`.
local function block_value(b, high, low)
  return bit.band(bit.rshift(b.half == 1 and high or low, b.shift), b.mask)
end

-- The live entries' places in the blob by block value, per block of `blocks` (built once
-- per ring, for every article compared with it).
local function by_block(live, blocks)
  if live.blocks then return live.blocks end
  local index = {}
  for j = 1, #blocks do index[j] = {} end
  for n = 2, #live, 2 do
    local at = live[n]
    local high, low = halves(live.blob, at)
    for j, b in ipairs(blocks) do
      local t, v = index[j], block_value(b, high, low)
      local places = t[v]
      if places then places[#places + 1] = at else t[v] = {at} end
    end
  end
  live.blocks = index
  return index
end

-- Hamming distance between the 8-byte fingerprint at blob[at] and `f` (its bytes).
local function distance(f, blob, at)
  local a1, a2, a3, a4, a5, a6, a7, a8 = byte(blob, at, at + 7)
  return BITS_SET[bxor(a1, f[1])] + BITS_SET[bxor(a2, f[2])] + BITS_SET[bxor(a3, f[3])]
    + BITS_SET[bxor(a4, f[4])] + BITS_SET[bxor(a5, f[5])] + BITS_SET[bxor(a6, f[6])]
    + BITS_SET[bxor(a7, f[7])] + BITS_SET[bxor(a8, f[8])]
end
