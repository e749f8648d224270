"""sensorbuf: helpers for sensor firmware and gateways."""
from .ring import RingBuffer
from .signal import Debouncer, Hysteresis, median_filter
from .units import adc_to_voltage, celsius_to_fahrenheit, convert_temperature, divider_input, voltage_to_adc
from .packet import FrameError, crc8, decode_frame, encode_frame

__all__ = [
    "RingBuffer", "Debouncer", "Hysteresis", "median_filter", "adc_to_voltage", "celsius_to_fahrenheit",
    "convert_temperature", "divider_input", "voltage_to_adc", "FrameError", "crc8", "decode_frame", "encode_frame",
]
