#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuselage_fuzz::plan_json(data));
