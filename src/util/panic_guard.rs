//! `contain`: the boundary where a dependency that can panic on bad bytes (tantivy reading a
//! damaged index file, say) is called. A panic inside becomes an `Err` with its message, and
//! the process-wide hook ([`install_quiet_panic_hook`], set by `main.rs`) keeps it off stderr:
//! the caller turns it into an error that names the damaged part, so a user never sees
//! `panicked at` for a fault that is the data's and not the code's.
//!
//! Invariant: a panic outside `contain` is still printed by the default hook (it is a bug).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, PanicHookInfo};

thread_local! {
    /// How many `contain` calls this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Where the last contained panic happened (the hook knows; the payload does not).
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`; a panic in it (on this thread) is returned as `Err(message)` instead of unwinding
/// further. Only for calls into code that may panic on bad input data: the state `f` touched
/// is not used again by the caller after an `Err` (hence the `AssertUnwindSafe`).
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    DEPTH.with(|d| d.set(d.get() + 1));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    result.map_err(|payload| {
        let location = LOCATION.with(|l| l.borrow_mut().take());
        let message = payload_text(payload.as_ref());
        match location {
            Some(at) => format!("{message} (at {at})"),
            None => message,
        }
    })
}

fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Keeps contained panics quiet (their location is kept for the error) and leaves every other
/// panic to the hook that was set before.
pub fn install_quiet_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
        if DEPTH.with(Cell::get) > 0 {
            // The crate and file, not the build machine's registry path.
            let at = info.location().map(|l| {
                let file: Vec<&str> = l.file().rsplitn(4, '/').collect();
                let short: Vec<&str> = file.into_iter().take(3).rev().collect();
                format!("{}:{}", short.join("/"), l.line())
            });
            LOCATION.with(|l| *l.borrow_mut() = at);
        } else {
            previous(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::panic)]
    fn a_contained_panic_is_an_error_with_its_message() {
        install_quiet_panic_hook();
        let r: Result<u32, String> = contain(|| panic!("bad bytes at {}", 14));
        let e = r.unwrap_err();
        assert!(e.starts_with("bad bytes at 14"), "{e}");
        assert_eq!(contain(|| 7), Ok(7));
        // Nesting keeps counting right: the outer call still contains after an inner one.
        let outer = contain(|| {
            let _ = contain(|| 1);
            let v: Vec<u8> = Vec::new();
            v[3]
        });
        assert!(outer.unwrap_err().contains("index out of bounds"));
    }
}
