#![no_main]

// The importer runs tract behind `catch_unwind` and turns its panics into errors. libFuzzer's
// panic hook aborts on any panic, caught or not, so the default hook is put back: a panic that
// escapes the target still aborts (libfuzzer-sys checks for one after every input).
libfuzzer_sys::fuzz_target!(
    init: {
        let _ = std::panic::take_hook();
    },
    |data: &[u8]| fuselage_fuzz::onnx(data)
);
