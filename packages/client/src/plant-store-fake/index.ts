export {
  createPlantStoreFake,
  type FakeToken,
  type FaultOptions,
  type PlantStoreFake,
  type PlantStoreFakeOptions,
  type PlantStoreFault,
  type RecordedDelivery,
  type RouteName,
  type SignedDelivery,
} from './plant-store-fake.ts';
