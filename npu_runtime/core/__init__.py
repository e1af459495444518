"""The emulated runtime's core: one state, raising AclError; acl/ and the Pythonic API translate."""
