//! The fingerprint kernel: from a text as worker.text.normalize.folded_utf8 gives
//! it to its content hash, its units, its search fingerprint and its set sketch, exactly as
//! the numpy path (worker/text/fast_units.py, fingerprint.py, simhash.py, sketch.py) computes
//! them, in one pass per text instead of some fifty numpy calls per batch.
//!
//! Floating-point sums are taken in the numpy path's order (features sorted by hash, each
//! byte value's tally, then byte values in ascending order), so that a vote at a tie falls
//! the same way; tests/text/test_native.py compares the two on every corpus the tests have.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

const BITS: usize = 64;
const ROTATION: u32 = 21; // simhash.ROTATION
const MIX_1: u64 = 0xFF51AFD7ED558CCD; // MurmurHash3's 64-bit finaliser (simhash._mix)
const MIX_2: u64 = 0xC4CEB9FE1A85EC53;
const EMPTY: u64 = u64::MAX; // sketch._EMPTY
const ROTATE: u64 = 0x9E3779B97F4A7C15; // sketch._ROTATE

/// BIT_MASKS[value][bit]: all ones where `bit` of the byte `value` is set, else zero.
const BIT_MASKS: [[u64; 8]; 256] = {
    let mut table = [[0u64; 8]; 256];
    let mut value = 0;
    while value < 256 {
        let mut bit = 0;
        while bit < 8 {
            if (value >> bit) & 1 == 1 {
                table[value][bit] = u64::MAX;
            }
            bit += 1;
        }
        value += 1;
    }
    table
};

/// The IDF table's keys are xxh3 hashes already: hashing them again buys nothing.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[pyclass(frozen)]
pub struct Kernel {
    idf: HashMap<u64, f64, BuildHasherDefault<Identity>>,
    cap: f64,
    ranges: Vec<(u32, u32)>,
    lowest: u32, // the lowest code point of `ranges`: most text is below it
    shingle_size: usize,
    bins: usize,
    bits: u32,
    sqrt: bool, // tf damped by its square root; else linear (each occurrence a feature)
    lines: (usize, usize), // a text with this many units (at least, at most) keeps its line
}

#[pymethods]
impl Kernel {
    /// `idf_hashes`, `idf_weights`: the IDF table (units by their xxh3_64), every other unit
    /// weighs `cap`; `ranges`: the code points that are units on their own
    /// (features.CHARACTER_RANGES); `damping`: "sqrt" or "linear"; `line_units`: the fewest
    /// and most units of a text that keeps its line (lines.LINE_MIN_UNITS, LINE_MAX_UNITS).
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        idf_hashes: Vec<u64>,
        idf_weights: Vec<f64>,
        cap: f64,
        ranges: Vec<(u32, u32)>,
        shingle_size: usize,
        bins: usize,
        bits: u32,
        damping: &str,
        line_units: (usize, usize),
    ) -> PyResult<Self> {
        if idf_hashes.len() != idf_weights.len() {
            return Err(PyValueError::new_err("one IDF weight per hash"));
        }
        if shingle_size < 1 {
            return Err(PyValueError::new_err("shingle_size must be >= 1"));
        }
        if !(2..=1024).contains(&bins) || !bins.is_power_of_two() {
            return Err(PyValueError::new_err(
                "bins must be a power of two, 2..1024",
            ));
        }
        if ![8, 16, 32].contains(&bits) {
            return Err(PyValueError::new_err("bits must be 8, 16 or 32"));
        }
        let sqrt = match damping {
            "sqrt" => true,
            "linear" => false,
            _ => return Err(PyValueError::new_err("damping must be sqrt or linear")),
        };
        let mut idf = HashMap::with_capacity_and_hasher(idf_hashes.len(), Default::default());
        for (hash, weight) in idf_hashes.into_iter().zip(idf_weights) {
            idf.entry(hash).or_insert(weight); // the first of colliding units, as a sorted search finds
        }
        let lowest = ranges.iter().map(|&(low, _)| low).min().unwrap_or(u32::MAX);
        Ok(Kernel {
            idf,
            cap,
            ranges,
            lowest,
            shingle_size,
            bins,
            bits,
            sqrt,
            lines: line_units,
        })
    }

    /// For each folded text (bytes): (content hash, units, character units, search
    /// fingerprint, sketch, line); the search fingerprint and the sketch are None for a text
    /// without units. The line is each unit's hash kept to its low 16 bits, big-endian (as
    /// lines.line_of), or None for a text of fewer or more units than `line_units` allows.
    fn many<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let mut units: Vec<u64> = Vec::new();
        let mut collapsed: Vec<u8> = Vec::new();
        for item in texts.iter() {
            let bytes = item.cast::<PyBytes>()?.as_bytes();
            let text = std::str::from_utf8(bytes)
                .map_err(|e| PyValueError::new_err(format!("not UTF-8: {e}")))?;
            let characters = self.units(text, &mut units, &mut collapsed);
            let content_hash = xxh3_128(&collapsed).to_be_bytes();
            let (search, sketch) = if units.is_empty() {
                (None, None)
            } else {
                let sketch = self.sketch(&shingles(&units, self.shingle_size));
                (Some(self.simhash(&units)), Some(PyBytes::new(py, &sketch)))
            };
            let (fewest, most) = self.lines;
            let line = (fewest..=most).contains(&units.len()).then(|| {
                let kept: Vec<u8> = units
                    .iter()
                    .flat_map(|&u| (u as u16).to_be_bytes())
                    .collect();
                PyBytes::new(py, &kept)
            });
            let row = (
                PyBytes::new(py, &content_hash),
                units.len(),
                characters,
                search,
                sketch,
                line,
            );
            out.append(PyTuple::new(py, row.into_pyobject(py)?.iter())?)?;
        }
        Ok(out)
    }
}

impl Kernel {
    /// The text's units hashed (into `units`) and its normalised form (into `collapsed`: the
    /// units, one space where spaces were between them); returns how many units are
    /// characters. A unit runs from a space or a character unit to the next one.
    fn units(&self, text: &str, units: &mut Vec<u64>, collapsed: &mut Vec<u8>) -> usize {
        units.clear();
        collapsed.clear();
        let bytes = text.as_bytes();
        let mut characters = 0;
        let mut start: Option<usize> = None; // where the word being read began
        let mut gap = false; // spaces since the last unit
        let mut emit = |from: usize, to: usize, units: &mut Vec<u64>, gap: &mut bool| {
            if *gap && !collapsed.is_empty() {
                collapsed.push(b' ');
            }
            *gap = false;
            collapsed.extend_from_slice(&bytes[from..to]);
            units.push(xxh3_64(&bytes[from..to]));
        };
        for (at, c) in text.char_indices() {
            if c == ' ' {
                if let Some(from) = start.take() {
                    emit(from, at, units, &mut gap);
                }
                gap = true;
            } else if self.is_character_unit(c as u32) {
                if let Some(from) = start.take() {
                    emit(from, at, units, &mut gap);
                }
                emit(at, at + c.len_utf8(), units, &mut gap);
                characters += 1;
            } else if start.is_none() {
                start = Some(at);
            }
        }
        if let Some(from) = start {
            emit(from, bytes.len(), units, &mut gap);
        }
        characters
    }

    fn is_character_unit(&self, point: u32) -> bool {
        point >= self.lowest
            && self
                .ranges
                .iter()
                .any(|&(low, high)| low <= point && point <= high)
    }

    fn weight(&self, hash: u64) -> f64 {
        *self.idf.get(&hash).unwrap_or(&self.cap)
    }

    /// Each vote summed as numpy sums it (see the module's comment).
    fn simhash(&self, units: &[u64]) -> u64 {
        let mut features: Vec<(u64, f64)> = Vec::with_capacity(units.len());
        if self.sqrt {
            let mut sorted = units.to_vec();
            sorted.sort_unstable();
            let mut i = 0;
            while i < sorted.len() {
                let mut j = i + 1;
                while j < sorted.len() && sorted[j] == sorted[i] {
                    j += 1;
                }
                features.push((sorted[i], self.weight(sorted[i]) * ((j - i) as f64).sqrt()));
                i = j;
            }
        } else {
            features.extend(units.iter().map(|&h| (h, self.weight(h))));
        }
        let mut tally = vec![0.0f64; 8 * 256];
        let mut total = 0.0f64;
        for &(hash, weight) in &features {
            total += weight;
            for (place, byte) in hash.to_le_bytes().iter().enumerate() {
                tally[place * 256 + *byte as usize] += weight;
            }
        }
        // votes[b]: the weight of the features with bit b set, summed as numpy's product of
        // the tallies and the bits sums it (every byte value in ascending order, adding 0.0
        // where the bit is clear). The sum is masked rather than multiplied by the bit: the
        // same +0.0 or sum, without turning bits into floats.
        let mut votes = [0.0f64; BITS];
        for (place, row) in tally.chunks_exact(256).enumerate() {
            let mut lane = [0.0f64; 8];
            for (value, &sum) in row.iter().enumerate() {
                let bits = sum.to_bits();
                for (vote, &mask) in lane.iter_mut().zip(&BIT_MASKS[value]) {
                    *vote += f64::from_bits(bits & mask);
                }
            }
            votes[place * 8..place * 8 + 8].copy_from_slice(&lane);
        }
        let mut fingerprint = 0u64;
        for (bit, &vote) in votes.iter().enumerate() {
            if 2.0 * vote > total {
                fingerprint |= 1 << bit;
            }
        }
        fingerprint
    }

    /// sketch.sketches of one text's shingle hashes.
    fn sketch(&self, shingles: &[u64]) -> Vec<u8> {
        let n = self.bins;
        let shift = 64 - (usize::BITS - n.leading_zeros()) + 1;
        let low = (1u64 << shift) - 1;
        let mut table = vec![EMPTY; n];
        for &h in shingles {
            let bin = (h >> shift) as usize;
            table[bin] = table[bin].min(h & low);
        }
        let mut out = Vec::with_capacity(n * self.bits as usize / 8);
        let mask = (1u64 << self.bits) - 1;
        for i in 0..n {
            let mut value = table[i];
            if value == EMPTY {
                if let Some(moved) = (1..n).find(|d| table[(i + d) % n] != EMPTY) {
                    value =
                        table[(i + moved) % n].wrapping_add((moved as u64).wrapping_mul(ROTATE));
                }
            }
            let kept = value & mask;
            out.extend_from_slice(&kept.to_be_bytes()[8 - self.bits as usize / 8..]);
        }
        out
    }
}

/// simhash.shingle_hashes: each run of `size` units, each unit rotated by its place in the
/// run, XORed, mixed; a text shorter than one shingle gets one of all its units.
fn shingles(units: &[u64], size: usize) -> Vec<u64> {
    if units.len() < size {
        return vec![mix(units.iter().fold(0, |a, &h| a ^ h))];
    }
    (0..=units.len() - size)
        .map(|start| {
            let mut combined = 0u64;
            for (i, &h) in units[start..start + size].iter().enumerate() {
                combined ^= h.rotate_left((ROTATION * i as u32) % BITS as u32);
            }
            mix(combined)
        })
        .collect()
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(MIX_1);
    x ^= x >> 33;
    x = x.wrapping_mul(MIX_2);
    x ^ (x >> 33)
}
