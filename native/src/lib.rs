//! dedup-worker's compiled kernels, each the twin of a numpy path that gives the same results
//! (the Python package runs that path where this one is not installed).

mod buckets;
mod fingerprint;

use pyo3::prelude::*;

#[pymodule]
fn dedup_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<fingerprint::Kernel>()?;
    module.add_class::<buckets::Buckets>()
}
