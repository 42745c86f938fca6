use super::*;

#[test]
fn durations() {
    assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
    assert_eq!(parse_duration("100µs").unwrap(), Duration::from_micros(100));
    assert_eq!(
        parse_duration("1.5ms").unwrap(),
        Duration::from_micros(1500)
    );
    assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
    assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
    assert_eq!(
        parse_duration("5 days").unwrap_err(),
        "unknown duration unit 'days' in '5 days' (use ns, us, ms, s, m)"
    );
    assert!(parse_duration("fast").is_err());
    assert_eq!(
        parse_duration("18446744073709551615s").unwrap_err(),
        "'18446744073709551615s' is longer than the longest duration taken (365 days)"
    );
    assert_eq!(
        parse_duration("365d").unwrap_err(),
        "unknown duration unit 'd' in '365d' (use ns, us, ms, s, m)"
    );
    assert_eq!(parse_duration("525600m").unwrap(), MAX_DURATION);
}

#[test]
fn sizes() {
    assert_eq!(parse_size("4096").unwrap(), 4096);
    assert_eq!(parse_size("64K").unwrap(), 65536);
    assert_eq!(parse_size("2MiB").unwrap(), 2 << 20);
    assert!(parse_size("2X").is_err());
    assert_eq!(
        parse_size("99999999999999999999").unwrap_err(),
        "99999999999999999999 is larger than the largest size, 18446744073709551615 bytes"
    );
    assert_eq!(
        parse_size("17179869184G").unwrap_err(),
        "17179869184G is larger than the largest size, 18446744073709551615 bytes"
    );
    assert_eq!(
        parse_size_up_to("3G", 2 << 30, "the largest window").unwrap_err(),
        "3G is larger than the largest window, 2G (2147483648 bytes)"
    );
    assert_eq!(parse_size_up_to("2G", 2 << 30, "w"), Ok(2 << 30));
    assert_eq!(
        parse_size("x").unwrap_err(),
        "'x' is not a size (try 4096, 64K, 2MiB)"
    );
}
