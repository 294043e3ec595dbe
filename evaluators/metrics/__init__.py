"""Pure metrics: functions of plain values, returning frozen dataclasses with raw counts."""
