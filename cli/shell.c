/* placeholder replaced by the storage shell */
#include <stdio.h>
#include "shale.h"
int main(void) { printf("Shale %s\n", shale_libversion()); return 0; }
