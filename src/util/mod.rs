//! Small helpers that would otherwise be micro-crates.

mod atomic_file;

pub use atomic_file::{fsync_dir, write_atomic};
