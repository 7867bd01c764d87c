//! Names buffermgrd derives from configuration: dynamic profile names (sonic-buffer.md §7.5)
//! and the platform model number (§5.1, §7.1, quirk §11.10).
//!
//! Invariant: profile names are built from the configured strings verbatim (speed as the
//! effective-speed string, cable as configured), so two ports share a profile exactly when
//! SONiC would make them share one.
//!
//! The `_8lane` suffix (§7.5) is decided by buffermgrd itself, not by the headroom plugin: it
//! needs the platform vendor to be Mellanox (`ASIC_VENDOR=mellanox`, see [`is_mellanox_asic`]),
//! the port to have 8 lanes, and the platform *model number* (DEVICE_METADATA `platform`, read
//! as [`buffermgrd_model_number`]) to be SN4xxx with a speed other than 400G or SN5xxx with a
//! speed other than 800G. The headroom model used to compute the profile plays no part.

/// Inputs of a dynamic lossless profile name.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileNameParts<'a> {
    /// Effective speed string, e.g. `"100000"`.
    pub speed: &'a str,
    /// Cable length as configured, e.g. `"5m"`.
    pub cable: &'a str,
    /// Port MTU string (`"9100"` when the port has none).
    pub mtu: &'a str,
    /// The PG's threshold (`dynamic_th`) as a string.
    pub threshold: &'a str,
    /// `default_dynamic_th` as a string.
    pub default_threshold: &'a str,
    /// Gearbox model (empty in practice: SONiC never sets it).
    pub gearbox_model: &'a str,
    /// Whether buffermgrd runs on a Mellanox platform (`ASIC_VENDOR=mellanox`; derive it with
    /// [`is_mellanox_asic`]). Independent of the headroom model.
    pub mellanox: bool,
    /// Lane count of the port.
    pub lane_count: u32,
    /// Platform model number as buffermgrd reads it ([`buffermgrd_model_number`]).
    pub model: Option<u32>,
}

/// The dynamic profile name: `pg_lossless_<speed>_<cable>[_mtu<mtu>][_th<th>][_<gearbox>][_8lane]_profile`.
///
/// `_8lane` is added on Mellanox 8-lane ports of SN4000 platforms below 400G and SN5000
/// platforms below 800G only; elsewhere 8-lane and 4-lane ports share names (quirk §11.8).
pub fn dynamic_profile_name(p: &ProfileNameParts<'_>) -> String {
    let mut name = format!("pg_lossless_{}_{}", p.speed, p.cable);
    if p.mtu != "9100" {
        name.push_str("_mtu");
        name.push_str(p.mtu);
    }
    if p.threshold != p.default_threshold {
        name.push_str("_th");
        name.push_str(p.threshold);
    }
    if !p.gearbox_model.is_empty() {
        name.push('_');
        name.push_str(p.gearbox_model);
    }
    if eight_lane_suffix(p.mellanox, p.lane_count, p.model, p.speed) {
        name.push_str("_8lane");
    }
    name.push_str("_profile");
    name
}

/// Whether a dynamic profile name gets `_8lane` (§7.5): Mellanox platform, 8 lanes, and
/// (model / 1000 == 4 and speed ≠ `"400000"`) or (model / 1000 == 5 and speed ≠ `"800000"`),
/// `model` being the platform model number as buffermgrd reads it. The speed is compared as
/// the effective-speed string.
pub fn eight_lane_suffix(mellanox: bool, lane_count: u32, model: Option<u32>, speed: &str) -> bool {
    if !mellanox || lane_count != 8 {
        return false;
    }
    match model.map(|m| m / 1000) {
        Some(4) => speed != "400000",
        Some(5) => speed != "800000",
        _ => false,
    }
}

/// Whether buffermgrd runs with `ASIC_VENDOR=mellanox` on a switch with this STATE_DB
/// `ASIC_TABLE` key: the Mellanox template (`platform/mellanox/asic_table.j2`, §2.1) names every
/// key `MELLANOX-SPECTRUM…`. The virtual switch (`VS-ASIC`) runs the Mellanox plugins but with
/// `ASIC_VENDOR=vs`, and Barefoot (`BAREFOOT-…`) is another vendor: neither gets `_8lane`.
pub fn is_mellanox_asic(asic_key: &str) -> bool {
    asic_key.starts_with("MELLANOX")
}

/// The model number as the pool plugin reads it: the first run of digits after the first
/// `sn` in the platform name (`x86_64-mlnx_msn2700-r0` → 2700, `…sn6600_ld…` → 6600).
pub fn platform_model_number(platform: &str) -> Option<u32> {
    let (_, rest) = platform.split_once("sn")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The model number as buffermgrd reads it: the 4 characters after the first `sn`, as a
/// number (they differ from [`platform_model_number`] for 5-digit models; quirk §11.10).
pub fn buffermgrd_model_number(platform: &str) -> Option<u32> {
    let (_, rest) = platform.split_once("sn")?;
    let four: String = rest.chars().take(4).collect();
    four.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts<'a>(speed: &'a str, cable: &'a str) -> ProfileNameParts<'a> {
        ProfileNameParts {
            speed,
            cable,
            mtu: "9100",
            threshold: "0",
            default_threshold: "0",
            gearbox_model: "",
            mellanox: true,
            lane_count: 4,
            model: Some(2700),
        }
    }

    #[test]
    fn spec_examples() {
        assert_eq!(
            dynamic_profile_name(&parts("100000", "300m")),
            "pg_lossless_100000_300m_profile"
        );
        assert_eq!(
            dynamic_profile_name(&ProfileNameParts {
                mtu: "1500",
                ..parts("50000", "5m")
            }),
            "pg_lossless_50000_5m_mtu1500_profile"
        );
        assert_eq!(
            dynamic_profile_name(&ProfileNameParts {
                threshold: "1",
                ..parts("100000", "5m")
            }),
            "pg_lossless_100000_5m_th1_profile"
        );
        let sn5600 = ProfileNameParts {
            lane_count: 8,
            model: Some(5600),
            ..parts("400000", "5m")
        };
        assert_eq!(
            dynamic_profile_name(&sn5600),
            "pg_lossless_400000_5m_8lane_profile"
        );
        let sn5600_800 = ProfileNameParts {
            speed: "800000",
            ..sn5600.clone()
        };
        assert_eq!(
            dynamic_profile_name(&sn5600_800),
            "pg_lossless_800000_5m_profile"
        );
        let sn4700_400 = ProfileNameParts {
            model: Some(4700),
            ..sn5600
        };
        assert_eq!(
            dynamic_profile_name(&sn4700_400),
            "pg_lossless_400000_5m_profile"
        );
    }

    #[test]
    fn eight_lane_rule() {
        // (model, speed, expected) on a Mellanox platform with an 8-lane port.
        for (model, speed, expect) in [
            (Some(2700), "100000", false),
            (Some(3800), "200000", false),
            (Some(4700), "100000", true),
            (Some(4700), "200000", true),
            (Some(4700), "400000", false),
            (Some(5600), "100000", true),
            (Some(5600), "400000", true),
            (Some(5600), "800000", false),
            (Some(5640), "200000", true),
            (Some(6600), "400000", false),
            (None, "200000", false),
        ] {
            assert_eq!(
                eight_lane_suffix(true, 8, model, speed),
                expect,
                "{model:?} {speed}"
            );
            // Never on 4-lane ports, never off Mellanox platforms.
            assert!(!eight_lane_suffix(true, 4, model, speed));
            assert!(!eight_lane_suffix(false, 8, model, speed));
        }
        // The speed is compared as a string, as buffermgrd does.
        assert!(eight_lane_suffix(true, 8, Some(4700), "400000.0"));
    }

    #[test]
    fn mellanox_vendor_from_the_asic_key() {
        use crate::tables::state::AsicModel;
        for (m, mellanox) in [
            (AsicModel::Spectrum1, true),
            (AsicModel::Spectrum2, true),
            (AsicModel::Spectrum3, true),
            (AsicModel::Spectrum4, true),
            (AsicModel::Spectrum5, true),
            (AsicModel::Spectrum6, true),
            (AsicModel::Vs, false),
            (AsicModel::Tofino2, false),
        ] {
            assert_eq!(is_mellanox_asic(m.key()), mellanox, "{}", m.key());
        }
    }

    #[test]
    fn model_numbers() {
        assert_eq!(platform_model_number("x86_64-mlnx_msn2700-r0"), Some(2700));
        assert_eq!(
            platform_model_number("x86_64-nvidia_sn6600_ld-r0"),
            Some(6600)
        );
        assert_eq!(
            buffermgrd_model_number("x86_64-nvidia_sn5600-r0"),
            Some(5600)
        );
        assert_eq!(
            platform_model_number("x86_64-nvidia_sn56001-r0"),
            Some(56001)
        );
        assert_eq!(
            buffermgrd_model_number("x86_64-nvidia_sn56001-r0"),
            Some(5600)
        );
        assert_eq!(platform_model_number("x86_64-kvm_x86_64-r0"), None);
    }
}
