//! A progress line on stderr for long runs, redrawn in place on a terminal
//! and printed every tenth of the way otherwise (so CI logs stay short).

use std::io::{IsTerminal, Write};

pub struct Progress {
    total: u64,
    done: u64,
    what: &'static str,
    tty: bool,
    last_tenth: u64,
    enabled: bool,
}

impl Progress {
    pub fn new(total: u64, what: &'static str, enabled: bool) -> Progress {
        Progress { total, done: 0, what, tty: std::io::stderr().is_terminal(), last_tenth: 0, enabled }
    }

    pub fn tick(&mut self, failed: u64) {
        self.done += 1;
        if !self.enabled || self.total == 0 {
            return;
        }
        let width = 30;
        let filled = (self.done * width / self.total) as usize;
        let bar = format!("[{}{}]", "#".repeat(filled), "-".repeat(width as usize - filled));
        let line = format!("{bar} {}/{} {} ({failed} failed)", self.done, self.total, self.what);
        let mut err = std::io::stderr();
        if self.tty {
            let _ = write!(err, "\r{line}");
            if self.done == self.total {
                let _ = writeln!(err);
            }
        } else {
            let tenth = self.done * 10 / self.total;
            if tenth > self.last_tenth {
                self.last_tenth = tenth;
                let _ = writeln!(err, "{line}");
            }
        }
    }
}
