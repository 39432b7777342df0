//! Ctrl-C: the first one asks a long command (a sweep, a fuzz) to stop
//! handing out work, finish what is in hand, report what it did and how to
//! resume, and exit 130; a second one ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C was pressed (or SIGINT sent).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    // Only async-signal-safe calls here: an atomic swap and `_exit`.
    if REQUESTED.swap(true, Ordering::Relaxed) {
        // SAFETY: `_exit` is async-signal-safe and takes any status.
        unsafe { libc::_exit(130) }
    }
}

/// Installs the handler; commands that do not look at [`requested`] should
/// not call this (the default, ending at once, is right for them).
pub fn install() {
    #[cfg(unix)]
    // SAFETY: installing a handler that only stores to an atomic and calls
    // `_exit`, both async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
}
