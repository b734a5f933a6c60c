//! How sizes read to a person: a leaf that the argument parsing (`common.rs`) and the
//! guarded file reader (`files.rs`) both print with.

/// A size as people write it: bytes below 1 KiB, else KiB, MiB or GiB, with decimals only
/// where the size is not a whole number of the unit (`512 B`, `128 KiB`, `1.5 MiB`, `1 GiB`).
pub fn human_size(bytes: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in units {
        if bytes >= scale {
            return if bytes.is_multiple_of(scale) {
                format!("{} {unit}", bytes / scale)
            } else {
                format!("{:.2} {unit}", bytes as f64 / scale as f64)
            };
        }
    }
    format!("{bytes} B")
}
