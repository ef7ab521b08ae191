use super::*;

const ASAN: &str = "\
=================================================================
==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602 at pc 0x55 bp 0x7f sp 0x7f
READ of size 4 at 0x602000000014 thread T0
    #0 0x55d4c3 in parse_chunk /src/png.c:20:5
    #1 0x55d4c4 in read_info /src/png.c:80:3
    #2 0x55d4c5 in png_read /src/png.c:99:3
    #3 0x55d4c6 in LLVMFuzzerTestOneInput /src/fuzz.c:9:1
    #4 0x55d4c7 in lafuzz::target::harness::run::h12 (/bin/fuzz+0x1234)

0x602000000014 is located 0 bytes after 4-byte region
allocated by thread T0 here:
    #0 0x7f in malloc (/bin/fuzz+0x99)
    #1 0x55 in other /src/other.c:1:1
";

#[test]
fn asan_report_gives_kind_access_and_state() {
    let d = Description::parse(ASAN);
    assert_eq!(d.kind, "heap-buffer-overflow READ 4");
    assert_eq!(d.frames.len(), 5, "only the first stack: {:?}", d.frames);
    assert_eq!(d.state(), ["parse_chunk", "read_info", "png_read"]);
    let written = Description::read_text(&d.to_text()).unwrap();
    assert_eq!(written.top_frame, "parse_chunk /src/png.c:20:5");
    assert_eq!(written.state, "parse_chunk / read_info / png_read");
    let again = Description::parse(&ASAN.replace(":20:5", ":21:7"));
    assert_eq!(
        again.bucket(),
        d.bucket(),
        "another line, the same function: one bug"
    );
}

#[test]
fn our_stack_printer_skips_signal_plumbing() {
    let out = "\
==7== ERROR: lafuzz: deadly signal SIGABRT
    #0 0x1 in lafuzz::triage::stack::print::h1 (/f+0x1)
    #1 0x2 in __restore_rt (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)
    #2 0x3 in __pthread_kill_implementation (/lib/x86_64-linux-gnu/libc.so.6+0x8ae3c)
    #3 0x4 in abort (/lib/x86_64-linux-gnu/libc.so.6+0x2647e)
    #4 0x5 in LLVMFuzzerTestOneInput /h/crashme.c:12:9
    #5 0x6 in lafuzz::target::harness::run::h2 (/f+0x6)
/tmp/x: CRASH (signal 6, SIGABRT)
";
    let d = Description::parse(out);
    assert_eq!(d.kind, "SIGABRT");
    assert_eq!(d.state(), ["LLVMFuzzerTestOneInput"]);
    let text = d.to_text();
    let written = Description::read_text(&text).unwrap();
    assert_eq!(written.kind, "SIGABRT");
    assert_eq!(written.bucket, d.bucket());
    assert_eq!(
        written.top_frame,
        "LLVMFuzzerTestOneInput /h/crashme.c:12:9"
    );
}

#[test]
fn verdict_alone_and_other_reports() {
    let d = Description::parse("x: CRASH (signal 11, SIGSEGV)\n");
    assert_eq!((d.kind.as_str(), d.frames.len()), ("SIGSEGV", 0));
    assert_eq!(
        Description::parse("x: TIMEOUT (over 10 ms)").kind,
        "timeout"
    );
    let ub = "a.c:3:5: runtime error: signed integer overflow: 1 + 2147483647 cannot be";
    assert_eq!(
        Description::parse(ub).kind,
        "undefined behaviour: signed integer overflow"
    );
    let leak = "==1==ERROR: LeakSanitizer: detected memory leaks\n\nDirect leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc (/f+0x1)\n    #1 0x2 in leaky /h/leak.c:5:3\n";
    let d = Description::parse(leak);
    assert_eq!((d.kind.as_str(), d.state()), ("memory leak", vec!["leaky"]));
    let with_id = "#1 0x5 in lafuzz_print_sanitizer_stack (/f+0x28) (BuildId: ac39)";
    let frame = parse_frame(with_id).unwrap();
    assert_eq!(
        (frame.function.as_str(), frame.location.as_str()),
        ("lafuzz_print_sanitizer_stack", "(/f+0x28)")
    );
    let cpp = "    #0 0x1 in ns::f(int, char const*) /a.cc:1:2";
    assert_eq!(
        parse_frame(cpp.trim()).unwrap().function,
        "ns::f(int, char const*)"
    );
}
