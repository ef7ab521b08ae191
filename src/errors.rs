//! Errors as users read them: one line each.

/// A LibAFL error as one line: its message without the backtrace LibAFL appends.
pub fn error_text(e: &libafl::Error) -> String {
    let text = e.to_string();
    text.split("\nBacktrace")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}
