//! `[switch] scheme` in scenario files: SIH, SHP and DSH with their parameters.

use headroom_sim::config::{SchemeConfig, ShpPool};
use headroom_sim::scenario;
use std::path::Path;

const BASE: &str = "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"100Gbps\"\ndelay = \"1us\"\n[[workload]]\nkind = \"incast\"\nsenders = [0, 1]\nreceiver = 2\nsize = \"64KiB\"\n";

fn parse(switch: &str) -> Result<SchemeConfig, String> {
    let text = format!("{BASE}[switch]\n{switch}");
    scenario::parse(&text, Path::new("s.toml"))
        .map(|s| s.config.switch.scheme)
        .map_err(|e| e.to_string())
}

#[test]
fn schemes_parse() {
    assert_eq!(parse(""), Ok(SchemeConfig::Sih));
    assert_eq!(
        parse("scheme = \"shp\"\n[switch.shp]\nover_subscribe_ratio = 4"),
        Ok(SchemeConfig::Shp(ShpPool::Ratio(4.0)))
    );
    assert_eq!(
        parse("scheme = \"shp\"\n[switch.shp]\npool = \"1MiB\""),
        Ok(SchemeConfig::Shp(ShpPool::Bytes(1 << 20)))
    );
    assert_eq!(
        parse("scheme = \"dsh\""),
        Ok(SchemeConfig::Dsh {
            delta_q: 1500,
            delta_p: 1500
        })
    );
    assert_eq!(
        parse("scheme = \"dsh\"\n[switch.dsh]\ndelta_q = \"3KB\"\ndelta_p = \"0B\""),
        Ok(SchemeConfig::Dsh {
            delta_q: 3000,
            delta_p: 0
        })
    );
}

#[test]
fn scheme_errors_name_the_field() {
    let e = parse("scheme = \"fancy\"").expect_err("unknown");
    assert!(
        e.contains("switch.scheme") && e.contains("sih, shp or dsh"),
        "{e}"
    );
    let e = parse("scheme = \"shp\"").expect_err("no pool");
    assert!(e.contains("switch.shp"), "{e}");
    let e = parse("scheme = \"shp\"\n[switch.shp]\npool = \"1MiB\"\nover_subscribe_ratio = 2")
        .expect_err("both");
    assert!(e.contains("not both"), "{e}");
    let e = parse("[switch.dsh]\ndelta_q = \"1KB\"").expect_err("dsh params without dsh");
    assert!(e.contains("switch.dsh"), "{e}");
    let e = parse("scheme = \"dsh\"\n[switch.dsh]\ndelta = \"1KB\"").expect_err("unknown key");
    assert!(e.contains("delta"), "{e}");
}
