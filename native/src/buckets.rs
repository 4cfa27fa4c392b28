//! The worker's copy of the index's buckets, and the search for each fingerprint's nearest
//! entries in the buckets it probes: what worker/index/redis/bucket_cache.py (BucketCache.read)
//! then nearest.py (nearest) compute, entry for entry, without a Python object per bucket.
//!
//! Entries are format.ENTRY: fingerprint (8 bytes), sequence number (6), first-seen second (4),
//! big-endian. Each bucket keeps its entries in first-seen order, as Redis does.

use multiversion::multiversion;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

const ENTRY_BYTES: usize = 18;
// Buckets whose entries are asked for ahead of their scan: enough to keep the memory busy.
const AHEAD: usize = 16;

// (packed to 4 bytes: 20 bytes an entry in memory rather than 24)
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Entry {
    fingerprint: u64,
    seq_low: u32,
    seq_high: u16,
    seen_s: u32,
}

impl Entry {
    fn parse(raw: &[u8]) -> Entry {
        Entry {
            fingerprint: u64::from_be_bytes(raw[0..8].try_into().unwrap()),
            seq_high: u16::from_be_bytes(raw[8..10].try_into().unwrap()),
            seq_low: u32::from_be_bytes(raw[10..14].try_into().unwrap()),
            seen_s: u32::from_be_bytes(raw[14..18].try_into().unwrap()),
        }
    }

    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn seq(&self) -> u64 {
        (u64::from(self.seq_high) << 32) | u64::from(self.seq_low)
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.fingerprint().to_be_bytes());
        out.extend_from_slice(&self.seq().to_be_bytes()[2..]);
        out.extend_from_slice(&{ self.seen_s }.to_be_bytes());
    }

    fn expired(&self, cutoff_s: Option<i64>) -> bool {
        cutoff_s.is_some_and(|cutoff| i64::from(self.seen_s) < cutoff)
    }
}

/// One table of the layout, as worker/index/redis/addresses.py numbers its buckets: a
/// fingerprint's key is its runs of bits (shift, mask, place in the key), its bucket the
/// table's first number plus the key, and the buckets it probes those of the key XOR each flip.
struct Table {
    runs: Vec<(u32, u64, u32)>,
    first: usize,
    flips: Vec<u64>,
}

impl Table {
    fn key(&self, fingerprint: u64) -> u64 {
        self.runs.iter().fold(0, |key, &(shift, mask, out)| {
            key | (((fingerprint >> shift) & mask) << out)
        })
    }
}

/// A table as Python gives it (BucketAddresses.numbering): runs, first number, flips.
type Numbering = (Vec<(u32, u64, u32)>, usize, Vec<u64>);

#[pyclass]
pub struct Buckets {
    buckets: Vec<Vec<Entry>>,
    entries: usize,
    tables: Vec<Table>,
}

#[pymethods]
impl Buckets {
    /// `tables`: each table's runs (shift, mask, place), first bucket number and flips.
    #[new]
    fn new(count: usize, tables: Vec<Numbering>) -> PyResult<Self> {
        let tables: Vec<Table> = tables
            .into_iter()
            .map(|(runs, first, flips)| Table { runs, first, flips })
            .collect();
        for table in &tables {
            if table
                .runs
                .iter()
                .any(|&(shift, mask, out)| shift > 63 || out > 63 || mask.leading_zeros() < out)
            {
                return Err(PyValueError::new_err("a run's bits lie outside 64"));
            }
            let keys = table
                .runs
                .iter()
                .fold(0, |k, &(_, mask, out)| k | (mask << out));
            let flips = table.flips.iter().fold(0, |f, &flip| f | flip);
            let top = table.first.checked_add((keys | flips) as usize);
            if top.is_none_or(|top| top >= count) {
                return Err(PyValueError::new_err(format!(
                    "a table's buckets reach past the {count} there are"
                )));
            }
        }
        Ok(Buckets {
            buckets: vec![Vec::new(); count],
            entries: 0,
            tables,
        })
    }

    /// Entries held, in every bucket.
    #[getter]
    fn entries(&self) -> usize {
        self.entries
    }

    fn clear(&mut self) {
        self.buckets.iter_mut().for_each(Vec::clear);
        self.entries = 0;
    }

    /// Append `entries` (in first-seen order) to their bucket in every table.
    fn add(&mut self, entries: &[u8]) -> PyResult<()> {
        if entries.len() % ENTRY_BYTES != 0 {
            return Err(PyValueError::new_err("entries are 18 bytes each"));
        }
        for table in &self.tables {
            for raw in entries.chunks_exact(ENTRY_BYTES) {
                let entry = Entry::parse(raw);
                let slot = table.first + table.key(entry.fingerprint()) as usize;
                self.buckets[slot].push(entry);
            }
        }
        self.entries += entries.len() / ENTRY_BYTES * self.tables.len();
        Ok(())
    }

    /// The bucket's entries, as Redis holds the bucket (None: empty).
    fn bucket<'py>(&self, py: Python<'py>, slot: usize) -> Option<Bound<'py, PyBytes>> {
        let bucket = self.buckets.get(slot).filter(|b| !b.is_empty())?;
        let mut out = Vec::with_capacity(bucket.len() * ENTRY_BYTES);
        bucket.iter().for_each(|e| e.write(&mut out));
        Some(PyBytes::new(py, &out))
    }

    /// For each fingerprint, of its probed buckets (each table's key XOR each of its flips,
    /// table after table): the `limit` entries nearest to it within `radius` bits, nearest
    /// first (between equals the first seen), each once, of the newest `max_read` of each
    /// bucket, those first seen before `cutoff_s` left out; as (entries, candidates compared,
    /// buckets over `max_read`, places among the probes of buckets led by expired entries).
    /// Those expired entries are then cut from the copy.
    fn nearest<'py>(
        &mut self,
        py: Python<'py>,
        fingerprints: Vec<u64>,
        radius: u32,
        limit: usize,
        max_read: usize,
        cutoff_s: Option<i64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let mut cut: Vec<usize> = Vec::new();
        let mut near: Vec<(u32, u64, Entry)> = Vec::new();
        let mut taken: Vec<u64> = Vec::with_capacity(limit);
        let mut found: Vec<u8> = Vec::new();
        let per = self.tables.iter().map(|t| t.flips.len()).sum();
        let mut row: Vec<usize> = Vec::with_capacity(per);
        let mut probed: Vec<&[Entry]> = Vec::with_capacity(per);
        for &fingerprint in &fingerprints {
            near.clear();
            let (mut candidates, mut hot) = (0usize, 0usize);
            let mut expired: Vec<usize> = Vec::new();
            row.clear();
            for table in &self.tables {
                let key = table.key(fingerprint);
                row.extend(
                    table
                        .flips
                        .iter()
                        .map(|&flip| table.first + (key ^ flip) as usize),
                );
            }
            // The buckets are all over memory: ask for all of the row's at once, so that the
            // processor fetches them side by side rather than one after another.
            probed.clear();
            probed.extend(row.iter().map(|&slot| self.buckets[slot].as_slice()));
            probed
                .iter()
                .take(AHEAD)
                .for_each(|b| prefetch(b, max_read));
            for (place, (&bucket, &slot)) in probed.iter().zip(&row).enumerate() {
                if let Some(ahead) = probed.get(place + AHEAD) {
                    prefetch(ahead, max_read);
                }
                let Some(first) = bucket.first() else {
                    continue;
                };
                if first.expired(cutoff_s) {
                    expired.push(place);
                    cut.push(slot);
                }
                let newest = if bucket.len() > max_read {
                    hot += 1;
                    &bucket[bucket.len() - max_read..]
                } else {
                    bucket
                };
                candidates += scan(newest, fingerprint, radius, cutoff_s, &mut near);
            }
            near.sort_by_key(|&(distance, seq, _)| (distance, seq)); // stable, as numpy's lexsort
            taken.clear();
            found.clear();
            for &(_, seq, entry) in &near {
                if taken.len() == limit {
                    break;
                }
                if !taken.contains(&seq) {
                    taken.push(seq);
                    entry.write(&mut found);
                }
            }
            let places = PyTuple::new(py, &expired)?;
            out.append((PyBytes::new(py, &found), candidates, hot, places))?;
        }
        drop(probed);
        if let Some(cutoff) = cutoff_s {
            for slot in cut {
                let bucket = &mut self.buckets[slot];
                let old = bucket
                    .iter()
                    .take_while(|e| i64::from(e.seen_s) < cutoff)
                    .count();
                bucket.drain(..old);
                self.entries -= old;
            }
        }
        Ok(out)
    }
}

fn prefetch(entries: &[Entry], max_read: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let newest = &entries[entries.len().saturating_sub(max_read)..];
        for line in newest.chunks(4) {
            // SAFETY: a prefetch only hints at an address, and this one is in a live slice.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast());
            }
        }
    }
}

/// The entries within `radius` of `fingerprint` go to `near`; returns how many were compared
/// (those first seen before `cutoff_s` are not). Compiled twice, and the copy with the
/// processor's popcount instruction runs where it has one (the baseline x86-64 has none).
#[multiversion(targets("x86_64+popcnt"))]
fn scan(
    entries: &[Entry],
    fingerprint: u64,
    radius: u32,
    cutoff_s: Option<i64>,
    near: &mut Vec<(u32, u64, Entry)>,
) -> usize {
    let mut candidates = 0;
    for entry in entries {
        if entry.expired(cutoff_s) {
            continue;
        }
        candidates += 1;
        let distance = (entry.fingerprint() ^ fingerprint).count_ones();
        if distance <= radius {
            near.push((distance, entry.seq(), *entry));
        }
    }
    candidates
}
