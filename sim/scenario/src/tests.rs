use super::*;

#[test]
fn default_is_one_gfx90a() {
    let s = Scenario::default();
    assert_eq!(s.devices.len(), 1);
    assert_eq!(s.devices[0].arch, "gfx90a");
    assert_eq!(s.clock.start_ns, 1_000_000_000);
}

#[test]
fn parses_full_scenario_and_computes_durations() {
    let s = Scenario::from_toml(
        r#"
        [clock]
        start_ns = 5000
        [[devices]]
        arch = "gfx942"
        name = "Sim MI300"
        [[devices]]
        arch = "gfx90a"
        [kernels]
        fixed_ns = 100
        ps_per_item = 1000
        [[kernels.cost]]
        match = "slow"
        fixed_ns = 9000
        [copy]
        fixed_ns = 10
        bytes_per_us = 1000
        [[errors]]
        api = "hipMalloc"
        after = 2
        count = 1
        error = "hipErrorOutOfMemory"
        [[effects]]
        match = "noop"
        builtin = "none"
        "#,
        "t.toml",
    )
    .unwrap();
    assert_eq!(s.devices.len(), 2);
    assert_eq!(s.devices[1].name, Device::default().name);
    // 64 work-items at 1 ns each plus the fixed cost.
    assert_eq!(s.kernel_duration_ns("fast_kernel", [64, 1, 1]), 100 + 64);
    // The override replaces fixed_ns only; ps_per_item falls back.
    assert_eq!(s.kernel_duration_ns("my_slow_kernel", [8, 2, 1]), 9000 + 16);
    // 1000 bytes at 1000 bytes/us = 1000 ns.
    assert_eq!(s.copy_duration_ns(1000), 1010);
    assert_eq!(s.copy_duration_ns(1), 11);
    assert_eq!(
        s.effect_for("noop_vector_add").unwrap().builtin.as_deref(),
        Some("none")
    );
    assert_eq!(
        s.effect_for("_Z10vector_addPKf")
            .unwrap()
            .builtin
            .as_deref(),
        Some("vector_add")
    );
    assert!(s.effect_for("scale").is_none());
}

#[test]
fn unknown_keys_are_errors() {
    let err = Scenario::from_toml("[clock]\nstart = 1\n", "bad.toml").unwrap_err();
    assert!(err.to_string().contains("bad.toml"), "{err}");
}

#[test]
fn injector_fails_the_right_calls() {
    let rules = vec![InjectedError {
        api: "hipMalloc".into(),
        after: 2,
        count: Some(2),
        error: errors::ErrorCode::Name("hipErrorOutOfMemory".into()),
    }];
    let (inj, unknown) = ErrorInjector::new(&rules, |n| (n == "hipErrorOutOfMemory").then_some(2));
    assert!(unknown.is_empty());
    let got: Vec<_> = (0..6).map(|_| inj.check("hipMalloc")).collect();
    assert_eq!(got, vec![None, None, Some(2), Some(2), None, None]);
    assert_eq!(inj.check("hipFree"), None);
}

#[test]
fn resize_devices_repeats_the_last() {
    let mut s = Scenario::default();
    s.devices[0].arch = "gfx1100".into();
    s.resize_devices(3);
    assert_eq!(s.devices.len(), 3);
    assert!(s.devices.iter().all(|d| d.arch == "gfx1100"));
}
