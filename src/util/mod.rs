//! Small helpers that would otherwise be micro-crates.

mod atomic_file;
mod byte_string;
mod no_follow;
mod panic_guard;
mod path_text;
mod resident_memory;
mod zstd_frame;

pub use atomic_file::{fsync_dir, write_atomic};
pub use byte_string::ByteString;
pub use no_follow::{open_no_follow, open_regular, read_no_follow, read_regular, special_kind};
pub use panic_guard::{contain, install_quiet_panic_hook};
pub use path_text::{join_relative, strip_js_ext};
pub use resident_memory::ResidentMemory;
pub use zstd_frame::{zstd_compress, zstd_decompress};
