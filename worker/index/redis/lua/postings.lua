-- Where articles are posted (removal.lua takes them out). Shared by every script (after
-- lib.lua). The index's layout is stored in its meta record (field `tables`): SimHash tables
-- (worker/layout/tables.py, Table.spec) or "bands:BxR" (worker/layout/bands.py); band and
-- line buckets share group strings (field `groups`: the bits of a bucket's key that name its
-- group). Every postings key starts with the scripts'
-- postings prefix:
--   tables: prefix .. table number .. ':' .. the table key in hex; a STRING of ENTRY entries
--   bands:  prefix .. 'b' .. the band's number (1 byte) .. its group (bucket_of); a STRING of
--           the postings of the group's buckets, oldest first, each led by its bucket's
--           check (the key's other bits) and then the article's number; a bucket with more
--           than SPILL has them in a string of its own instead: the same key and its check
--   lines:  prefix .. 'l' .. the band's number (1 byte) .. its group; the same (short lines,
--           in every layout: lines.lua)
--   prefix .. 'd' .. a sequence number: the numbers of the article's dependents,
--           the near-duplicates posted only under the bands they do not share with it
--   prefix .. 'n': HASH, sequence number -> a short line's units (2 bytes each), then its
--           LINE_BANDS keys (LINE_KEY bytes each)
-- Many buckets to a key keeps the keys few (a key costs Redis more than a dozen postings).
-- After the check, a posting holds its article's number; a marker (SPILL), NO_NUMBER. (When
-- the article was indexed is in its record, which a match reads anyway.)
local POSTING_TAIL = NUMBER
local LINE_BANDS, LINE_KEY = 16, 4

-- Bit p of an 8-byte big-endian fingerprint (p = 0 is the least significant).
local function fingerprint_bit(fp, p)
  local byte = string.byte(fp, 8 - math.floor(p / 8))
  return math.floor(byte / 2 ^ (p % 8)) % 2
end

-- The bucket of `fp` in every table, from the layout's table spec: tables separated by
-- spaces, each runs of bit positions ("63-48" or "5") joined by "." and then "/" and the
-- probe radius.
local function bucket_keys_of(spec, fp, prefix)
  local found = {}
  for runs in string.gmatch(spec, '([^ /]+)/%d+') do
    local value, width = 0, 0
    for top, bottom in string.gmatch(runs, '(%d+)-?(%d*)') do
      top = tonumber(top)
      bottom = tonumber(bottom) or top
      for p = top, bottom, -1 do
        value, width = value * 2 + fingerprint_bit(fp, p), width + 1
      end
    end
    found[#found + 1] = prefix .. #found .. ':' .. bit.tohex(value, math.ceil(width / 4))
  end
  return found
end

-- A band or line key as 4 bytes: itself, padded with zeros, or with its further bytes folded
-- in (format.py, key_bytes).
local function key_bytes(key)
  if #key == 4 then return key end
  local b1, b2, b3, b4 = string.byte(key, 1, 4)
  local v = (((b1 or 0) * 256 + (b2 or 0)) * 256 + (b3 or 0)) * 256 + (b4 or 0)
  for i = 5, #key do v = (v * 33 + string.byte(key, i)) % 4294967296 end
  return struct.pack('>I4', v)
end

-- How a band or line key splits when `groups` bits of its mixed value name its group: the
-- span of a group's values, and where the check starts in the value's 4 bytes.
local function split_of(groups)
  return {span = 2 ^ (32 - groups), from = 5 - math.ceil((32 - groups) / 8)}
end

-- The band layout in `meta`: {bands =, rows =, split = split_of(groups), groups =, front =
-- the expiry sweep's front (expire.lua) as NUMBER bytes: postings of lower numbers are no
-- one's}, and the stored spec; for tables nil, the spec and the groups of their short
-- lines' buckets.
local function layout_of(meta)
  local stored = redis.call('HMGET', meta, 'tables', 'groups', 'front')
  local bands, rows = string.match(stored[1] or '', '^bands:(%d+)x(%d+)$')
  if not bands then return nil, stored[1], tonumber(stored[2]) end
  local groups = tonumber(stored[2])
  return {bands = tonumber(bands), rows = tonumber(rows), split = split_of(groups),
          groups = groups, front = pack_number(tonumber(stored[3] or '1'))}, stored[1]
end

-- The key prefix of band `b`'s groups of kind `letter`, made once per call.
local group_prefixes = {b = {}, l = {}}
local function group_prefix(prefix, letter, b)
  local made = group_prefixes[letter][b]
  if not made then
    made = prefix .. letter .. string.char(b)
    group_prefixes[letter][b] = made
  end
  return made
end

-- A key's 32 bits spread over all 32 (v times an odd number, mod 2^32: each key its own
-- value), so that keys that share their first bins, as a template's do, fall into different
-- groups. format.py, mixed.
local function mixed(v)
  local high, low = math.floor(v / 65536), v % 65536
  return ((high * 0x79B1 + low * 0x9E37) % 65536 * 65536 + low * 0x79B1) % 4294967296
end

-- The bucket of `key` in band `b` of kind `letter` (`split`: split_of's): {the key of its
-- group string, the check that leads its postings there}. A group holds every key whose
-- mixed value starts with the same `groups` bits; the check is its other bits, in whole
-- bytes. format.py, bucket_of.
local function bucket_of(prefix, letter, b, key, split)
  local v = mixed(struct.unpack('>I4', key_bytes(key)))
  local group, rest = math.floor(v / split.span), v % split.span
  local check = string.sub(string.char(math.floor(rest / 16777216), math.floor(rest / 65536) % 256,
                                       math.floor(rest / 256) % 256, rest % 256), split.from)
  return {group_prefix(prefix, letter, b) .. string.char(math.floor(group / 65536),
                                                         math.floor(group / 256) % 256,
                                                         group % 256), check}
end

-- Band `b`'s bins in `sketch` (0-based `b`): its key.
local function band_bins(shape, sketch, b)
  return string.sub(sketch, b * shape.rows + 1, (b + 1) * shape.rows)
end

-- The bucket of each band of `sketch`.
local function band_keys_of(shape, sketch, prefix)
  local found, rows, split = {}, shape.rows, shape.split
  for b = 0, shape.bands - 1 do
    found[b + 1] = bucket_of(prefix, 'b', b, string.sub(sketch, b * rows + 1, (b + 1) * rows),
                             split)
  end
  return found
end

-- The buckets of a short line (`held`: its value in the lines hash, or its units and keys).
local function line_keys_of(held, prefix, split)
  local found, keys_at = {}, #held - LINE_BANDS * LINE_KEY
  for b = 0, LINE_BANDS - 1 do
    local at = keys_at + b * LINE_KEY + 1
    found[b + 1] = bucket_of(prefix, 'l', b, string.sub(held, at, at + LINE_KEY - 1), split)
  end
  return found
end
local function line_units(held) return string.sub(held, 1, #held - LINE_BANDS * LINE_KEY) end
local function dependents_key(prefix, seq) return prefix .. 'd' .. seq end
local function lines_key(prefix) return prefix .. 'n' end
-- A band index's count of the calls that changed its postings, and its log of them, newest
-- first (guesses.lua). `touched`: the band buckets this script took postings out of.
local function calls_key(prefix) return prefix .. 'w' end
local function posts_key(prefix) return prefix .. 'p' end
local LOG_CALLS = 256
local TOKEN = 16
local touched = {}

-- A band bucket's id in the log: its band's number (`b`, 0-based), its group (3 bytes) and
-- its check (bucket: bucket_of's).
local function bucket_id(bucket, b)
  return string.char(b) .. string.sub(bucket[1], -3) .. bucket[2]
end

-- A call's entry in the log: its number (8 bytes), its batch's token (TOKEN bytes), '1' if it
-- kept to its batch's guesses to its end (else '0'), then the bucket ids under which every
-- later call searches (`searched`, after their count: 2 bytes), then those it posted under.
local function log_call(prefix, number, token, kept, searched, posted)
  local key = posts_key(prefix)
  redis.call('LPUSH', key, struct.pack('>I8', number) .. token .. (kept and '1' or '0')
    .. struct.pack('>I2', #searched) .. table.concat(searched) .. table.concat(posted))
  redis.call('LTRIM', key, 0, LOG_CALLS - 1)
end

-- (Scripts other than check_bands.lua.) The band buckets they took postings out of, as a
-- call of their own in the log: a guess made before it searches the articles under those.
local function log_removals(prefix)
  if #touched == 0 then return end
  log_call(prefix, redis.call('INCR', calls_key(prefix)), string.rep('-', TOKEN), true, {},
           touched)
end

-- A bucket with more than SPILL postings in its group string moves them to a string of its
-- own (its group's key and its check), and leaves a marker in the group: its check and zero
-- bytes in place of the rest. Crowded buckets therefore do not crowd the others of their group.
local SPILL = 8
local function own_key(bucket) return bucket[1] .. bucket[2] end

-- A posting of number `seq`, appended to `bucket`: to its own string if it has one
-- (`bucket.own`: known from a read; else asked).
local function post_one(bucket, seq)
  local own = bucket.own
  if own == nil then own = redis.call('EXISTS', own_key(bucket)) == 1 end
  redis.call('APPEND', own and own_key(bucket) or bucket[1], bucket[2] .. seq)
end
