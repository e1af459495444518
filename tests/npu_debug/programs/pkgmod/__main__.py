import sys

print("module ran", __name__, sys.argv[1:])
