//! The zero-profile file (buffermgrd's `-z zero_profiles.json`, sonic-buffer.md §2.3, §7.8):
//! zero pools and profiles written to APPL_DB while some port is admin down, and the control
//! fields saying which PG/queue ids get which zero profile.
//!
//! Invariant: pools and profiles keep the file order, which decides the default zero profile
//! of each direction (the first zero profile on a normal pool of that direction).

use crate::tables::{reference_name, Fields, IdRange};

/// Why a zero-profile file could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ZeroProfilesError {
    /// The text is not valid JSON.
    #[error("zero profiles: invalid JSON: {0}")]
    Json(String),
    /// The document is not a list of objects.
    #[error("zero profiles: expected a JSON list of {{\"<TABLE>:<name>\": {{…}}, \"OP\": \"SET\"}} objects")]
    NotAList,
    /// An element has no `<TABLE>:<name>` / `control_fields` key, or its value is not an
    /// object of strings.
    #[error("zero profiles: element {index} is malformed: {reason}")]
    BadElement {
        /// Position in the list (0-based).
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A control field that names ids does not hold an id range (`0`, `3-4`).
    #[error("zero profiles: control field `{field}` = {value:?} is not an id range")]
    BadIds {
        /// The field (`pgs_to_apply_zero_profile` / `queues_to_apply_zero_profile`).
        field: String,
        /// The value.
        value: String,
    },
}

/// The contents of a zero-profile file.
#[derive(Clone, Debug, PartialEq)]
pub struct ZeroProfiles {
    /// `BUFFER_POOL_TABLE:<name>` entries, in file order.
    pub pools: Vec<(String, Fields)>,
    /// `BUFFER_PROFILE_TABLE:<name>` entries, in file order (`pool` as a plain name).
    pub profiles: Vec<(String, Fields)>,
    /// `control_fields.pgs_to_apply_zero_profile`: the only PG ids that get a zero profile on
    /// admin-down ports (all other PGs are removed).
    pub pgs_to_apply_zero_profile: Option<IdRange>,
    /// `control_fields.ingress_zero_profile`: the zero profile for those PGs (and the default
    /// ingress zero profile).
    pub ingress_zero_profile: Option<String>,
    /// `control_fields.queues_to_apply_zero_profile`.
    pub queues_to_apply_zero_profile: Option<IdRange>,
    /// `control_fields.egress_zero_profile`.
    pub egress_zero_profile: Option<String>,
    /// `control_fields.support_removing_buffer_items` (absent = `yes`): whether PGs and
    /// queues may be removed from APPL_DB.
    pub support_removing_buffer_items: bool,
}

impl ZeroProfiles {
    /// Mellanox's `zero_profiles.j2` (sonic-buffer.md §2.3): `ingress_zero_pool`,
    /// `ingress_lossy_pg_zero_profile` applied to PG `0` of admin-down ports, and one zero
    /// profile per normal pool (`ingress_lossy_zero_profile` is listed even on single-ingress-
    /// pool SKUs, where buffermgrd skips it because its pool does not exist).
    pub fn mellanox() -> ZeroProfiles {
        let zero = crate::defaults::mellanox_zero_profiles(false);
        let pools = zero
            .pools
            .iter()
            .map(|(n, p)| (n.clone(), p.to_fields()))
            .collect();
        let order = [
            "ingress_lossy_pg_zero_profile",
            "ingress_lossy_zero_profile",
            "ingress_lossless_zero_profile",
            "egress_lossy_zero_profile",
            "egress_lossless_zero_profile",
        ];
        let profiles = order
            .iter()
            .filter_map(|n| {
                zero.profiles
                    .get(*n)
                    .map(|p| (n.to_string(), p.to_fields()))
            })
            .collect();
        ZeroProfiles {
            pools,
            profiles,
            pgs_to_apply_zero_profile: Some(IdRange::single(0)),
            ingress_zero_profile: Some("ingress_lossy_pg_zero_profile".into()),
            queues_to_apply_zero_profile: None,
            egress_zero_profile: None,
            support_removing_buffer_items: true,
        }
    }

    /// Reads the swssconfig-style list SONiC renders:
    /// `[{"BUFFER_POOL_TABLE:ingress_zero_pool": {…}, "OP": "SET"}, …, {"control_fields": {…}}]`.
    /// Reference values (`[BUFFER_POOL_TABLE:x]`) are reduced to plain names.
    pub fn from_json(text: &str) -> Result<ZeroProfiles, ZeroProfilesError> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ZeroProfilesError::Json(e.to_string()))?;
        let list = v.as_array().ok_or(ZeroProfilesError::NotAList)?;
        let mut out = ZeroProfiles {
            pools: Vec::new(),
            profiles: Vec::new(),
            pgs_to_apply_zero_profile: None,
            ingress_zero_profile: None,
            queues_to_apply_zero_profile: None,
            egress_zero_profile: None,
            support_removing_buffer_items: true,
        };
        for (index, el) in list.iter().enumerate() {
            let bad = |reason: &str| ZeroProfilesError::BadElement {
                index,
                reason: reason.to_string(),
            };
            let obj = el.as_object().ok_or_else(|| bad("not an object"))?;
            let mut found = false;
            for (k, val) in obj {
                if k == "OP" {
                    continue;
                }
                found = true;
                let fobj = val
                    .as_object()
                    .ok_or_else(|| bad(&format!("`{k}` is not an object")))?;
                let mut fields = Fields::new();
                for (f, fv) in fobj {
                    let s = match fv {
                        serde_json::Value::String(s) => s.clone(),
                        serde_json::Value::Number(n) => n.to_string(),
                        _ => return Err(bad(&format!("`{k}.{f}` is not a string"))),
                    };
                    fields.insert(f.clone(), s);
                }
                if k == "control_fields" {
                    out.apply_control(&fields)?;
                    continue;
                }
                let (table, name) = k
                    .split_once(':')
                    .ok_or_else(|| bad(&format!("key `{k}` is not <TABLE>:<name>")))?;
                if let Some(p) = fields.get_mut("pool") {
                    *p = reference_name(p).to_string();
                }
                match table {
                    "BUFFER_POOL_TABLE" => out.pools.push((name.to_string(), fields)),
                    "BUFFER_PROFILE_TABLE" => out.profiles.push((name.to_string(), fields)),
                    other => return Err(bad(&format!("unknown table `{other}`"))),
                }
            }
            if !found {
                return Err(bad("no entry"));
            }
        }
        Ok(out)
    }

    fn apply_control(&mut self, fields: &Fields) -> Result<(), ZeroProfilesError> {
        let ids = |field: &str, value: &str| {
            IdRange::parse(value).map_err(|_| ZeroProfilesError::BadIds {
                field: field.to_string(),
                value: value.to_string(),
            })
        };
        for (f, v) in fields {
            match f.as_str() {
                "pgs_to_apply_zero_profile" => self.pgs_to_apply_zero_profile = Some(ids(f, v)?),
                "queues_to_apply_zero_profile" => {
                    self.queues_to_apply_zero_profile = Some(ids(f, v)?)
                }
                "ingress_zero_profile" => {
                    self.ingress_zero_profile = Some(reference_name(v).to_string())
                }
                "egress_zero_profile" => {
                    self.egress_zero_profile = Some(reference_name(v).to_string())
                }
                "support_removing_buffer_items" => self.support_removing_buffer_items = v == "yes",
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const J2: &str = r#"[
    {"BUFFER_POOL_TABLE:ingress_zero_pool": {"mode": "static", "type": "ingress", "size": "0"}, "OP": "SET"},
    {"BUFFER_PROFILE_TABLE:ingress_lossy_pg_zero_profile": {"pool": "[BUFFER_POOL_TABLE:ingress_zero_pool]", "size": "0", "static_th": "0"}, "OP": "SET"},
    {"BUFFER_PROFILE_TABLE:ingress_lossy_zero_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "-8"}, "OP": "SET"},
    {"BUFFER_PROFILE_TABLE:ingress_lossless_zero_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "-8"}, "OP": "SET"},
    {"BUFFER_PROFILE_TABLE:egress_lossy_zero_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "-8"}, "OP": "SET"},
    {"BUFFER_PROFILE_TABLE:egress_lossless_zero_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "-8"}, "OP": "SET"},
    {"control_fields": {"pgs_to_apply_zero_profile": "0", "ingress_zero_profile": "[BUFFER_PROFILE_TABLE:ingress_lossy_pg_zero_profile]"}, "OP": "SET"}
]"#;

    #[test]
    fn the_mellanox_file_reads_like_the_builtin() {
        let z = ZeroProfiles::from_json(J2).expect("parses");
        assert_eq!(z, ZeroProfiles::mellanox());
    }

    #[test]
    fn errors_name_the_element() {
        assert!(matches!(
            ZeroProfiles::from_json("{}"),
            Err(ZeroProfilesError::NotAList)
        ));
        assert!(matches!(
            ZeroProfiles::from_json(r#"[{"OP": "SET"}]"#),
            Err(ZeroProfilesError::BadElement { index: 0, .. })
        ));
        assert!(matches!(
            ZeroProfiles::from_json(r#"[{"control_fields": {"pgs_to_apply_zero_profile": "x"}}]"#),
            Err(ZeroProfilesError::BadIds { .. })
        ));
    }
}
