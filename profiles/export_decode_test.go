package profiles

// DecodeProto exposes decodeProto to the benchmarks of profiles_test.
var DecodeProto = decodeProto
