//! Small helpers that would otherwise be micro-crates.

mod atomic_file;
mod panic_guard;
mod path_text;

pub use atomic_file::{fsync_dir, write_atomic};
pub use panic_guard::{contain, install_quiet_panic_hook};
pub use path_text::{join_relative, strip_js_ext};
