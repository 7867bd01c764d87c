//! Seed 003's 19 positive and 3 negative test cases (defined once in
//! `bufmgr_common/seed003.rs`) run through the daemon against a real `redis-server` on a free
//! loopback port: CONFIG_DB/STATE_DB writes in Redis, keyspace notifications, APPL_DB
//! written with the ProducerStateTable protocol and consumed by an orchagent stand-in.

mod bufmgr_common;
mod daemon_common;

use bufmgr_common::seed003;
use daemon_common::RedisSwitch;

#[test]
fn positive_01_increase_port_speed() {
    seed003::positive_01_increase_port_speed::<RedisSwitch>();
}

#[test]
fn positive_02_increase_cable_length() {
    seed003::positive_02_increase_cable_length::<RedisSwitch>();
}

#[test]
fn positive_03_decrease_port_speed() {
    seed003::positive_03_decrease_port_speed::<RedisSwitch>();
}

#[test]
fn positive_04_decrease_cable_length() {
    seed003::positive_04_decrease_cable_length::<RedisSwitch>();
}

#[test]
fn positive_05_update_speed_and_cable_length_together() {
    seed003::positive_05_update_speed_and_cable_length_together::<RedisSwitch>();
}

#[test]
fn positive_06_speed_cable_tuple_occurs_for_the_first_time() {
    seed003::positive_06_speed_cable_tuple_occurs_for_the_first_time::<RedisSwitch>();
}

#[test]
fn positive_07_tuple_referenced_once_then_no_longer() {
    seed003::positive_07_tuple_referenced_once_then_no_longer::<RedisSwitch>();
}

#[test]
fn positive_08_shutdown_a_port() {
    seed003::positive_08_shutdown_a_port::<RedisSwitch>();
}

#[test]
fn positive_09_startup_a_port() {
    seed003::positive_09_startup_a_port::<RedisSwitch>();
}

#[test]
fn positive_10_dynamic_profile_with_non_default_alpha() {
    seed003::positive_10_dynamic_profile_with_non_default_alpha::<RedisSwitch>();
}

#[test]
fn positive_11_non_default_lossless_pg() {
    seed003::positive_11_non_default_lossless_pg::<RedisSwitch>();
}

#[test]
fn positive_12_headroom_override_on_a_port() {
    seed003::positive_12_headroom_override_on_a_port::<RedisSwitch>();
}

#[test]
fn positive_13_dynamic_and_override_on_the_same_port() {
    seed003::positive_13_dynamic_and_override_on_the_same_port::<RedisSwitch>();
}

#[test]
fn positive_14_remove_headroom_override_on_a_port() {
    seed003::positive_14_remove_headroom_override_on_a_port::<RedisSwitch>();
}

#[test]
fn positive_15_remove_headroom_override_on_a_port_pg() {
    seed003::positive_15_remove_headroom_override_on_a_port_pg::<RedisSwitch>();
}

#[test]
fn positive_16_system_start_with_empty_config_db() {
    seed003::positive_16_system_start_with_empty_config_db::<RedisSwitch>();
}

#[test]
fn positive_17_system_start_with_a_legal_config_db() {
    seed003::positive_17_system_start_with_a_legal_config_db::<RedisSwitch>();
}

#[test]
fn positive_18_system_start_from_old_image() {
    seed003::positive_18_system_start_from_old_image::<RedisSwitch>();
}

#[test]
fn positive_19_warm_reboot_from_old_image() {
    seed003::positive_19_warm_reboot_from_old_image::<RedisSwitch>();
}

#[test]
fn negative_01_headroom_override_with_unexisting_profile() {
    seed003::negative_01_headroom_override_with_unexisting_profile::<RedisSwitch>();
}

#[test]
fn negative_02_remove_a_referenced_profile() {
    seed003::negative_02_remove_a_referenced_profile::<RedisSwitch>();
}

#[test]
fn negative_03_cable_length_exceeding_the_maximum_headroom() {
    seed003::negative_03_cable_length_exceeding_the_maximum_headroom::<RedisSwitch>();
}
