#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuselage_fuzz::accelerator(data));
