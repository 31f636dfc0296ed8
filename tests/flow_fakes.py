"""A stand-in target for the flow-area tests that run campaigns against a fake driver."""


class FakeTarget:
    """What campaign.execute and triage read of a target: one OpenCL C device that keeps denormals."""

    name = "fake"
    family = lineage = "fake"
    path = "opencl-c"
    fingerprint_id = "f00"
    fingerprint = {"single_fp_config": {"denorm": True}, "device_name": "Fake", "driver_version": "1.0"}
    settings = ()
    release = ""
