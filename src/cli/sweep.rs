//! A sweep's report, printed: by `run --seeds` and by `merge`, alike.

use super::{Format, EXIT_FAILED, EXIT_OK};
use crate::sweep::SweepDoc;

/// Prints the report, text or json, and says how the command exits.
pub fn print(doc: &SweepDoc, format: Format) -> i32 {
    match format {
        Format::Text => print!("{}", doc.text()),
        Format::Json => {
            let value = serde_json::to_value(doc).unwrap_or_default();
            println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        }
    }
    if doc.passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
