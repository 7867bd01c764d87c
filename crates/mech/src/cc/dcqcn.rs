//! DCQCN reaction point (being written).
#![allow(missing_docs)]
use crate::units::{Rate, Time};
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcqcnVariant { Paper, Mellanox }
#[derive(Debug, Clone)]
pub struct DcqcnConfig;
#[derive(Debug, Clone)]
pub struct Dcqcn { rate: Rate }
impl Dcqcn {
    pub fn rate(&self) -> Rate { self.rate }
    pub fn on_cnp(&mut self, _now: Time) {}
    pub fn on_bytes_sent(&mut self, _now: Time, _bytes: u64) {}
    pub fn poll_timeout(&self) -> Option<Time> { None }
    pub fn handle_timeout(&mut self, _now: Time) {}
}
