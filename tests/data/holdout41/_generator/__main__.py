from . import write_all

if __name__ == "__main__":
    for name in write_all():
        print(name)
