"""A two-process job started by torchrun (gloo), each rank training its own copy on the simulated GPU and
averaging the loss with all_reduce after every step. Rank 1's batch at step 2 holds a label equal to the class
count; its nll_loss asserts and rank 1 dies, then torchrun stops rank 0. `firstassert merge` must name rank 1
(the culprit line is marked `# the culprit`)."""
import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(64, 32).cuda()
    y = torch.randint(0, classes, (64,))
    if rank == 1 and step == 2:
        y[3] = classes  # the bad value: target[3] = 10
    y = y.cuda()
    loss = nn.functional.cross_entropy(model(x), y)  # the culprit
    # The loss is read before backward, as the other jobs log it: autograd's thread meeting the lost context would
    # terminate the process before Python's exit handlers run.
    average = loss.detach().cpu()
    opt.zero_grad()
    loss.backward()
    opt.step()
    dist.all_reduce(average)
print(f"rank {rank} done")
dist.destroy_process_group()
