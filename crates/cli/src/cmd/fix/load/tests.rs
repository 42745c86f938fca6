use super::*;

/// The template's own checks are fixload's; a refusal names the file.
#[test]
fn a_refused_template_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t");
    std::fs::write(&p, "55=IBM|54=2\n38=5|").unwrap();
    assert_eq!(
        read_template(&p).unwrap(),
        vec![
            (55, b"IBM".to_vec()),
            (54, b"2".to_vec()),
            (38, b"5".to_vec())
        ]
    );
    std::fs::write(&p, "11=x").unwrap();
    let e = format!("{:#}", read_template(&p).unwrap_err());
    assert_eq!(
        e,
        format!(
            "{}: tag 11 is written by the session or the generator, not the template",
            p.display()
        )
    );
}
