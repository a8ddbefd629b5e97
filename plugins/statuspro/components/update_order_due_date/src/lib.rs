//! The StatusPro `update_order_due_date` tool as a toolhost component
//! (`statuspro_update_order_due_date.wasm`). The tool itself is
//! [`statuspro_tools::UpdateOrderDueDate`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::UpdateOrderDueDate);
