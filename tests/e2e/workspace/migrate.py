import torch

if torch.cuda.is_available():
    torch.cuda.set_device(0)
