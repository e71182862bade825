//! The explorer resolves a scenario against the built-in catalogs plus the user's own entries
//! (`UserEntries`), and its system field takes the CLI's system spec (`ID,nics=…,scale_out=…`).

use fmperf_core::catalog;
use fmperf_core::explore::ExploreSearch;
use fmperf_core::extended::ExtendedOptions;
use fmperf_core::mode::Mode;
use fmperf_core::resolve::UserEntries;
use fmperf_core::resolve::explorer::ExploreFields;

fn fields(model: &str, system: &str) -> ExploreFields {
    ExploreFields {
        model: model.into(),
        system: system.into(),
        gpus: "64".into(),
        batch: "512".into(),
        ..ExploreFields::default_scenario()
    }
}

#[test]
fn a_users_system_resolves_and_searches_in_both_modes() {
    let mut mine = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap().clone();
    mine.id = "my-h100-pod".into();
    mine.memory_gb = Some(96.0);
    let user = UserEntries { models: Vec::new(), systems: vec![mine] };
    let f = fields("gpt3", "my-h100-pod");
    // Unknown without the user's entries; the error is at the field and names the nearest ids.
    let e = f.resolve_in(&Mode::Reference).unwrap_err();
    assert_eq!(e[0].field(), Some("system"));
    for mode in [Mode::Reference, Mode::Extended(ExtendedOptions::default())] {
        let spec = f.resolve_with(&mode, &user).unwrap();
        assert_eq!(spec.system_id, "my-h100-pod");
        assert_eq!(spec.capacity_gb(), 96.0);
        let mut s = ExploreSearch::new(spec).unwrap();
        while !s.step(100_000) {}
        assert!(s.result().candidates() > 0);
    }
}

#[test]
fn system_spec_options_reach_both_modes() {
    let plain = fields("gpt3", "nvidia_h100_sxm5_80gb").resolve_in(&Mode::Reference).unwrap();
    let spec =
        fields("gpt3", "nvidia_h100_sxm5_80gb,nics=2,scale_out=100,scale_up=300").resolve_in(&Mode::Reference).unwrap();
    assert_eq!(spec.system.nvlink_bandwidth, 300.0);
    assert!(spec.system.ib_bandwidth > plain.system.ib_bandwidth);
    assert_eq!(spec.mapping.nics_per_device, Some(2));
    let ext = fields("gpt3", "nvidia_h100_sxm5_80gb,scale_out=100")
        .resolve_in(&Mode::Extended(ExtendedOptions::default()))
        .unwrap();
    assert_eq!(ext.mapping.scale_out_gbps, Some(100.0));
    // Option errors name the option; the domain field overrides the spec's domain.
    let e = fields("gpt3", "nvidia_h100_sxm5_80gb,nics=two").resolve_in(&Mode::Reference).unwrap_err();
    assert_eq!(e[0].field(), Some("nics"));
    let mut f = fields("gpt3", "nvidia_h100_sxm5_80gb,domain=4");
    f.domain = "8".into();
    assert_eq!(f.resolve_in(&Mode::Reference).unwrap().system.domain_size, 8);
}
