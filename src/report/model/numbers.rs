//! How the reports write their figures: percentages rounded to one
//! decimal and sizes in human units, the same in every format.

/// Round to one decimal, so reports are stable and readable.
pub(crate) fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Human-readable size: `812 B`, `12.3 KiB`, `4.1 MiB`.
pub fn human_bytes(n: u64) -> String {
    match crate::cli::byte_units(n) {
        (_, "B") => format!("{n} B"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}
