"""The classroom hub service; imports the core, never server/ or kernel code. What a
student's server and its kernels run to use it is `classroom/`."""
